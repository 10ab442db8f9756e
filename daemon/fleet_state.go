package daemon

import (
	"math"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/internal/store"
)

// What a node verified of its fleet survives a restart: each offer and
// revocation the view takes is kept in the store (fleet/, at most
// maxFleetRecords), with when the view was last in step with the fleet
// (written every fleetSyncEvery while it is, and on shutdown). At start
// they go back into the view (fleet.Client.Restore), verified again under
// the trust of that start, so a node restarted while the fleet is out of
// reach serves what it had verified; once the fleet is back, the offers
// it no longer holds go.

// maxFleetRecords bounds the fleet records kept in the store.
const maxFleetRecords = 10000

// fleetSyncEvery is how often the time the view was in step is written.
const fleetSyncEvery = time.Minute

// record is fleet.Config.OnRecord.
func (f *fleetNode) record(key string, data []byte, deleted bool) {
	var err error
	if deleted {
		err = f.st.DeleteFleetRecord(key)
	} else {
		var ok bool
		ok, err = f.st.PutFleetRecord(store.FleetRecord{Key: key, Data: data, At: time.Now()}, maxFleetRecords)
		if err == nil && !ok {
			f.log.Warn().Str("key", key).Int("max", maxFleetRecords).Msg("fleet record not kept: the state file holds the most it keeps")
		}
	}
	if err != nil {
		f.log.Error().Err(err).Str("key", key).Msg("fleet record not kept")
	}
}

// restore takes the fleet records kept in the store into the view.
func (f *fleetNode) restore() {
	recs, synced, err := f.st.FleetState()
	if err != nil {
		f.log.Error().Err(err).Msg("fleet records kept in the state file unreadable; the view starts empty")
		return
	}
	if len(recs) == 0 {
		return
	}
	rs := make([]fleet.Record, len(recs))
	for i, r := range recs {
		rs[i] = fleet.Record{Key: r.Key, Data: r.Data}
	}
	n := f.cl.Restore(rs, synced)
	f.log.Info().Int("records", n).Int("kept", len(recs)).Time("synced", synced).Msg("fleet view restored from the state file")
}

// keepSynced writes when the view was last in step, if that moved. It
// does not ask whether the view is live now: at shutdown the client may
// have left the fleet a moment before, and its last time in step still
// holds.
func (f *fleetNode) keepSynced() {
	st := f.cl.Status()
	if st.Synced.IsZero() || !st.Synced.After(f.syncedKept) {
		return
	}
	if err := f.st.SetFleetSynced(st.Synced); err != nil {
		f.log.Error().Err(err).Msg("fleet: keep the time the view was in step")
		return
	}
	f.syncedKept = st.Synced
}

// fleetNearest is the nearest answer from the fleet (nearest.go): of the
// trusted live offers of k's spec version on device at other problems,
// the one nearest to dims on the log scale whose config is valid at dims
// and has not failed verification here at problem, with its distance;
// its Verification is set only when it passed here (nearestAnswer queues
// the others' as a local nearest answer's). ok is false when there is none.
func (s *server) fleetNearest(k *kernel, dims []int, problem, device string) (c api.Config, d float64, ok bool, err error) {
	f := s.fleet
	if f == nil || len(k.jobs) == 0 {
		return c, 0, false, nil
	}
	at := store.JobKey{Kernel: k.spec.Name, SpecHash: k.spec.Hash, Problem: problem, Device: device}
	best, bestD := -1, math.Inf(1)
	offers := f.cl.LiveAt(k.spec.Name, k.spec.Hash, device)
	var passedAt *store.CertMeta
	for i, o := range offers {
		if o.Job.Problem == problem {
			continue // the exact job's: fleetAnswer's
		}
		from, err := parseProblem(o.Job.Problem)
		if err != nil || len(from) != len(dims) {
			continue
		}
		od := logDistance(dims, from)
		if od >= bestD {
			continue
		}
		passed, why, err := s.checkedAt(at, o.Cert.Key)
		if err != nil {
			return c, 0, false, err
		}
		if why == "" && passed == nil {
			why = s.sched.checks.validAt(k, k.jobs[0], dims, o.Cert.Key)
		}
		if why != "" {
			continue
		}
		if why, err := s.fleetRefused(o.Cert.ID, time.Now()); err != nil {
			return c, 0, false, err
		} else if why != "" {
			continue
		}
		best, bestD, passedAt = i, od, passed
	}
	if best < 0 {
		return c, 0, false, nil
	}
	o := offers[best]
	j := k.jobs[0]
	cfg, err := j.spec.Space.ParseKey(o.Cert.Key)
	if err != nil {
		return c, 0, false, nil
	}
	c = api.Config{
		Kernel: k.spec.Name, Problem: problem, Device: device, Config: j.spec.Space.WireConfigMap(cfg),
		Key: o.Cert.Key, Match: api.MatchNearest, TimeMS: o.Cert.Latency.MedianMS, Certificate: o.Cert.ID,
		CertifiedFor: o.Job.Problem, SpecHash: k.spec.Hash, Source: api.SourceFleet, Issuer: o.Cert.Issuer,
		From: o.Job.Problem, Confidence: math.Exp(-bestD),
	}
	switch j := s.sched.jobOf(at); {
	case passedAt != nil:
		// The certificate at this problem is this node's own check: its
		// issuer is this node's key, not the fleet config's issuer's.
		c.Certificate, c.CertifiedFor, c.TimeMS, c.Verification, c.Issuer = passedAt.ID, problem, passedAt.TimeMS, api.VerifyPassed, s.keyID
	case j != nil && f.waiting(at):
		// The problem's own job waits for the fleet (its config was
		// revoked, or none came yet): verified here now, not at a cycle
		// that may never run.
		c.Verification = f.queueCheck(j, o.Cert)
	}
	return c, bestD, true, nil
}
