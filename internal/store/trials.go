package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Checkpoint commits one generation of job in a single transaction: it
// appends trials (skipping config keys already stored), replaces the job's
// policy when policy is not nil, and writes cy, which must exist (NewCycle),
// when cy is not nil. On any error nothing of it is stored. The job is
// registered in the jobs bucket if this writes its first record.
func (s *Store) Checkpoint(job JobKey, trials []Trial, policy []byte, cy *Cycle) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("checkpoint %q: %w", job.String(), err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		if _, err := addTrials(tx, job, trials); err != nil {
			return err
		}
		if policy != nil {
			if err := putPolicy(tx, job, policy); err != nil {
				return err
			}
		}
		if cy != nil {
			return putCycle(tx, job, *cy)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("checkpoint %q: %w", job.String(), err)
	}
	return nil
}

// AddTrials appends trials to job, skipping config keys already stored (in
// the store or earlier in trials), and reports how many it stored.
func (s *Store) AddTrials(job JobKey, trials []Trial) (stored int, err error) {
	if err := job.validate(); err != nil {
		return 0, fmt.Errorf("add trials %q: %w", job.String(), err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		var err error
		stored, err = addTrials(tx, job, trials)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add trials %q: %w", job.String(), err)
	}
	return stored, nil
}

// seqFill is how full an append to seq/ leaves a page it splits.
const seqFill = 0.95

// addTrials appends trials to job in tx and returns how many it stored.
func addTrials(tx *bolt.Tx, job JobKey, trials []Trial) (int, error) {
	if len(trials) == 0 {
		return 0, nil
	}
	for i, tr := range trials {
		if tr.Key == "" {
			return 0, fmt.Errorf("trial %d: empty config key: %w", i, ErrInvalid)
		}
	}
	jb, err := createJobBucket(tx, bucketTrials, job)
	if err != nil {
		return 0, err
	}
	seqs, err := jb.CreateBucketIfNotExists(bucketTrialSeq)
	if err != nil {
		return 0, err
	}
	keys, err := jb.CreateBucketIfNotExists(bucketTrialKeys)
	if err != nil {
		return 0, err
	}
	// Trials are appended in sequence order: a full page split in half
	// (bbolt's default) is never filled again, which left seq/ pages 47%
	// full and doubled what a trial costs (BenchmarkTrialBytes).
	seqs.FillPercent = seqFill
	stored := 0
	for _, tr := range trials {
		k := []byte(tr.Key)
		if keys.Get(k) != nil {
			continue
		}
		data, err := encode(&trialRecord{V: recordVersion, Trial: tr})
		if err != nil {
			return 0, fmt.Errorf("trial %q: %w", tr.Key, err)
		}
		seq, err := seqs.NextSequence()
		if err != nil {
			return 0, err
		}
		if err := seqs.Put(u64(seq), data); err != nil {
			return 0, fmt.Errorf("trial %q: %w", tr.Key, err)
		}
		if err := keys.Put(k, u64(seq)); err != nil {
			return 0, fmt.Errorf("trial %q: %w", tr.Key, err)
		}
		stored++
	}
	return stored, nil
}

// Trials returns job's trials in insertion order. A trial that does not
// decode is skipped and reported to Options.OnCorrupt.
func (s *Store) Trials(job JobKey) ([]Trial, error) {
	out := []Trial{}
	err := s.view(func(tx *bolt.Tx) error {
		seqs, err := trialSeqs(tx, job)
		if err != nil || seqs == nil {
			return err
		}
		return seqs.ForEach(func(k, v []byte) error {
			tr, _, err := decodeSeqTrial(job, k, v)
			if err != nil {
				s.corrupt(bucketTrials, seqWhere(job, k), err)
				return nil
			}
			out = append(out, tr)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list trials %q: %w", job.String(), err)
	}
	return out, nil
}

// seqWhere names the key k of job's seq/ bucket in an error report: by
// its number where k is one.
func seqWhere(job JobKey, k []byte) string {
	name := quoted(string(k))
	if len(k) == 8 {
		name = numbered(binary.BigEndian.Uint64(k))
	}
	return path(string(bucketRoot), string(bucketTrials), quoted(job.String()), string(bucketTrialSeq), name)
}

// decodeSeqTrial decodes the trial at key k, value v of job's seq/ bucket,
// and its number.
func decodeSeqTrial(job JobKey, k, v []byte) (Trial, uint64, error) {
	where := seqWhere(job, k)
	seq, err := decodeU64(k, where)
	if err != nil {
		return Trial{}, 0, err
	}
	tr, err := decodeTrial(v, where)
	return tr, seq, err
}

// MarkTrial sets the status (and error text) of a stored trial of job; ErrNotFound if the job has no trial with that key.
//
// It is the one change a stored trial allows: a config that measured ok
// and then failed verification becomes wrong_result. An empty status is
// ErrInvalid; errText replaces the trial's Error, also when empty.
func (s *Store) MarkTrial(job JobKey, key, status, errText string) error {
	if err := job.validate(); err != nil {
		return fmt.Errorf("mark trial %q %q: %w", job.String(), key, err)
	}
	if status == "" {
		return fmt.Errorf("mark trial %q %q: empty status: %w", job.String(), key, ErrInvalid)
	}
	err := s.update(func(tx *bolt.Tx) error {
		tr, seq, found, err := trialByKey(tx, job, key)
		if err != nil {
			return err
		}
		if !found {
			return ErrNotFound
		}
		tr.Status, tr.Error = status, errText
		data, err := encode(&trialRecord{V: recordVersion, Trial: tr})
		if err != nil {
			return err
		}
		seqs, err := trialSeqs(tx, job)
		if err != nil {
			return err
		}
		return seqs.Put(u64(seq), data)
	})
	if err != nil {
		return fmt.Errorf("mark trial %q %q: %w", job.String(), key, err)
	}
	return nil
}

// HasTrial reports whether job has a trial of config key.
func (s *Store) HasTrial(job JobKey, key string) (bool, error) {
	var has bool
	err := s.view(func(tx *bolt.Tx) error {
		jb, err := jobBucket(tx, bucketTrials, job)
		if err != nil || jb == nil || key == "" {
			return err
		}
		if keys := jb.Bucket(bucketTrialKeys); keys != nil {
			has = keys.Get([]byte(key)) != nil
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("has trial %q %q: %w", job.String(), key, err)
	}
	return has, nil
}

// TrialCount returns how many trials job has.
func (s *Store) TrialCount(job JobKey) (int, error) {
	var count int
	err := s.view(func(tx *bolt.Tx) error {
		seqs, err := trialSeqs(tx, job)
		if err != nil || seqs == nil {
			return err
		}
		count = seqs.Stats().KeyN
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count trials %q: %w", job.String(), err)
	}
	return count, nil
}

// trialSeqs returns job's trials/<job>/seq bucket, or nil.
func trialSeqs(tx *bolt.Tx, job JobKey) (*bolt.Bucket, error) {
	jb, err := jobBucket(tx, bucketTrials, job)
	if err != nil || jb == nil {
		return nil, err
	}
	return jb.Bucket(bucketTrialSeq), nil
}

// Policy returns a copy of job's policy, and whether it has one.
func (s *Store) Policy(job JobKey) ([]byte, bool, error) {
	var (
		p  []byte
		ok bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketPolicies)
		if err != nil {
			return err
		}
		p, ok = get(b, []byte(job.String()))
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("get policy %q: %w", job.String(), err)
	}
	return p, ok, nil
}

// ResetPolicy deletes job's policy, so its next cycle starts afresh. It is
// not an error when there is none.
func (s *Store) ResetPolicy(job JobKey) error {
	err := s.update(func(tx *bolt.Tx) error {
		b, err := top(tx, bucketPolicies)
		if err != nil {
			return err
		}
		return b.Delete([]byte(job.String()))
	})
	if err != nil {
		return fmt.Errorf("reset policy %q: %w", job.String(), err)
	}
	return nil
}

// putPolicy replaces job's policy in tx.
func putPolicy(tx *bolt.Tx, job JobKey, policy []byte) error {
	b, err := top(tx, bucketPolicies)
	if err != nil {
		return err
	}
	if err := registerJob(tx, job); err != nil {
		return err
	}
	return b.Put([]byte(job.String()), policy)
}

// compactTrials drops the repetition times (TimesMS) of job's trials in tx
// but those of the keep fastest ok trials, which a certification may still
// take, and those of the configs the job serves or holds a certificate
// for, which a re-verification and export read; a trial that is not ok
// keeps its own. Every trial keeps its key,
// status, median time, energy, cost, time and cycle: what resuming a
// search, a warm start, `trials` and export need. A trial that does not
// decode is left as it is.
func compactTrials(tx *bolt.Tx, job JobKey, keep int) error {
	seqs, err := trialSeqs(tx, job)
	if err != nil || seqs == nil {
		return err
	}
	type timed struct {
		seq uint64
		tr  Trial
	}
	held, err := heldKeys(tx, job)
	if err != nil {
		return err
	}
	var ok []timed
	err = seqs.ForEach(func(k, v []byte) error {
		if len(k) != 8 || !bytes.Contains(v, []byte(`"times_ms"`)) {
			return nil
		}
		tr, err := decodeTrial(v, "")
		if err != nil || len(tr.TimesMS) == 0 || tr.Status != "ok" || held[tr.Key] {
			return nil
		}
		ok = append(ok, timed{binary.BigEndian.Uint64(k), tr})
		return nil
	})
	if err != nil || len(ok) <= keep {
		return err
	}
	slices.SortStableFunc(ok, func(a, b timed) int { return cmp.Compare(a.tr.TimeMS, b.tr.TimeMS) })
	for _, t := range ok[keep:] {
		t.tr.TimesMS = nil
		data, err := encode(&trialRecord{V: recordVersion, Trial: t.tr})
		if err != nil {
			return err
		}
		if err := seqs.Put(u64(t.seq), data); err != nil {
			return err
		}
	}
	return nil
}

// heldKeys are the config keys job serves (its served config and front)
// or holds a certificate for, in tx. A record that does not decode holds
// nothing.
func heldKeys(tx *bolt.Tx, job JobKey) (map[string]bool, error) {
	held := map[string]bool{}
	if sv, ok, err := getServed(tx, job); err == nil && ok {
		held[sv.Key] = true
		for _, p := range sv.Front {
			held[p.Key] = true
		}
	}
	ids, err := jobBucket(tx, bucketJobCerts, job)
	if err != nil || ids == nil {
		return held, err
	}
	err = ids.ForEach(func(id, _ []byte) error {
		if _, meta, err := readCert(tx, id); err == nil {
			held[meta.Key] = true
		}
		return nil
	})
	return held, err
}
