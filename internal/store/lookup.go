package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ServedView is what a config lookup needs of one job: its served config,
// if any, and the stored trials of the configs the answer names, found
// through the trials' key index so that no other trial is decoded.
type ServedView struct {
	Served    Served
	HasServed bool
	// Trials holds, by config key, the trial of the served config, of each
	// point of its front and of each extra key asked for, where stored.
	Trials map[string]Trial
	// Err is why this job's records could not be read (ErrCorrupt); the
	// other jobs' views are good.
	Err error
}

// ServedViews reads the ServedView of each job in one read transaction:
// views[i] is jobs[i]'s, with extra[i] (when extra is not nil) the keys of
// further trials to fetch, such as the job's default config. A record that
// does not decode costs its own job's view (its Err), not the others'.
func (s *Store) ServedViews(jobs []JobKey, extra [][]string) ([]ServedView, error) {
	out := make([]ServedView, len(jobs))
	err := s.view(func(tx *bolt.Tx) error {
		for i, job := range jobs {
			var keys []string
			if extra != nil {
				keys = extra[i]
			}
			out[i] = s.servedView(tx, job, keys)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read served views: %w", err)
	}
	return out, nil
}

// servedView is job's ServedView. As in Served and Trials, a record that
// does not decode costs itself only: it is reported to Options.OnCorrupt
// and read as absent (a corrupt served record serves nothing, a corrupt
// trial is left out of Trials).
func (s *Store) servedView(tx *bolt.Tx, job JobKey, extra []string) ServedView {
	var v ServedView
	sv, ok, err := getServed(tx, job)
	if errors.Is(err, ErrCorrupt) {
		s.corrupt(bucketServed, path(string(bucketRoot), string(bucketServed), quoted(job.String())), err)
		sv, ok, err = Served{}, false, nil
	}
	if err != nil {
		v.Err = fmt.Errorf("served view %q: %w", job.String(), err)
		return v
	}
	v.Served, v.HasServed = sv, ok
	keys := extra
	if ok {
		keys = append([]string{sv.Key}, keys...)
		for _, p := range sv.Front {
			keys = append(keys, p.Key)
		}
	}
	v.Trials = make(map[string]Trial, len(keys))
	for _, k := range keys {
		if _, done := v.Trials[k]; done || k == "" {
			continue
		}
		tr, _, found, err := trialByKey(tx, job, k)
		if errors.Is(err, ErrCorrupt) {
			s.corrupt(bucketTrials, path(string(bucketRoot), string(bucketTrials), quoted(job.String()), string(bucketTrialKeys), quoted(k)), err)
			continue
		}
		if err != nil {
			v.Err = fmt.Errorf("served view %q: %w", job.String(), err)
			return v
		}
		if found {
			v.Trials[k] = tr
		}
	}
	return v
}

// trialByKey reads job's trial of config key through the key index, with
// its number in seq/.
func trialByKey(tx *bolt.Tx, job JobKey, key string) (tr Trial, seq uint64, found bool, err error) {
	jb, err := jobBucket(tx, bucketTrials, job)
	if err != nil || jb == nil || key == "" {
		return Trial{}, 0, false, err
	}
	seqs, keys := jb.Bucket(bucketTrialSeq), jb.Bucket(bucketTrialKeys)
	if seqs == nil || keys == nil {
		return Trial{}, 0, false, nil
	}
	sk := keys.Get([]byte(key))
	if sk == nil {
		return Trial{}, 0, false, nil
	}
	keyWhere := path(string(bucketRoot), string(bucketTrials), quoted(job.String()), string(bucketTrialKeys), quoted(key))
	if seq, err = decodeU64(sk, keyWhere); err != nil {
		return Trial{}, 0, false, err
	}
	where := path(string(bucketRoot), string(bucketTrials), quoted(job.String()), string(bucketTrialSeq), numbered(seq))
	v := seqs.Get(u64(seq))
	if v == nil {
		return Trial{}, 0, false, fmt.Errorf("decode %s: %w: names trial %s, which is missing", keyWhere, ErrCorrupt, where)
	}
	if tr, err = decodeTrial(v, where); err != nil {
		return Trial{}, 0, false, err
	}
	if tr.Key != key {
		return Trial{}, 0, false, fmt.Errorf("decode %s: %w: names trial %s, which is of config %q", keyWhere, ErrCorrupt, where, tr.Key)
	}
	return tr, seq, true, nil
}

// TrialsAfter returns at most limit of job's trials in insertion order,
// those numbered after seq (0: from the first), and the number of the last
// one returned, to pass as seq for the next page; more says whether trials
// follow it. A limit of 0 or less returns them all.
func (s *Store) TrialsAfter(job JobKey, seq uint64, limit int) (trials []Trial, last uint64, more bool, err error) {
	trials = []Trial{}
	last = seq
	err = s.view(func(tx *bolt.Tx) error {
		seqs, err := trialSeqs(tx, job)
		if err != nil || seqs == nil {
			return err
		}
		c := seqs.Cursor()
		for k, v := c.Seek(u64(seq + 1)); k != nil; k, v = c.Next() {
			if limit > 0 && len(trials) == limit {
				more = true
				return nil
			}
			tr, n, err := decodeSeqTrial(job, k, v)
			if err != nil {
				// A corrupt trial costs itself only, as in Trials; the
				// page goes on past it.
				s.corrupt(bucketTrials, seqWhere(job, k), err)
				if len(k) == 8 {
					last = n
				}
				continue
			}
			trials, last = append(trials, tr), n
		}
		return nil
	})
	if err != nil {
		return nil, seq, false, fmt.Errorf("list trials %q after %d: %w", job.String(), seq, err)
	}
	return trials, last, more, nil
}

// LastCycle returns job's newest cycle, or with ended its newest cycle
// that has ended, reading back from the newest so that a long history is
// not decoded; ok is false when there is none.
func (s *Store) LastCycle(job JobKey, ended bool) (cy Cycle, ok bool, err error) {
	return s.LastCycleWhere(job, func(cy Cycle) bool { return !ended || !cy.Ended.IsZero() })
}

// LastCycleWhere returns job's newest cycle for which keep is true,
// reading back from the newest; ok is false when there is none.
func (s *Store) LastCycleWhere(job JobKey, keep func(Cycle) bool) (cy Cycle, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b, err := jobBucket(tx, bucketCycles, job)
		if err != nil || b == nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			where := path(string(bucketRoot), string(bucketCycles), quoted(job.String()), quoted(string(k)))
			id, err := decodeU64(k, where)
			if err == nil {
				where = path(string(bucketRoot), string(bucketCycles), quoted(job.String()), numbered(id))
				cy, err = decodeCycle(v, where)
			}
			if err != nil {
				// As in Cycles: a corrupt cycle costs itself only.
				s.corrupt(bucketCycles, where, err)
				cy = Cycle{}
				continue
			}
			if keep(cy) {
				ok = true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return Cycle{}, false, fmt.Errorf("last cycle %q: %w", job.String(), err)
	}
	return cy, ok, nil
}
