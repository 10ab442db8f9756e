package daemon

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/internal/store"
)

// Fleet failure reports (evidence.go): another node's report that a
// certificate failed there is recorded, by the reporter's key id (a node
// id is only the reporter's word), and revokes here only when this node's
// re-verification of the config fails, or when Evidence.NodeQuorum
// distinct keys report it within Evidence.Window. A certificate of this
// node's store is revoked (and the revocation published); a fleet offer
// this node serves is not served here any more (a failed re-verification
// records it wrong_result here, and the failure is published).

// maxFleetFailures bounds the failure reports waiting to be handled.
const maxFleetFailures = 256

// failureReported is fleet.Config.OnFailure: it queues f for run.
func (f *fleetNode) failureReported(fl fleet.Failure) {
	f.mu.Lock()
	if len(f.failures) < maxFleetFailures {
		f.failures = append(f.failures, fl)
	} else {
		f.log.Warn().Str("cert", fl.Cert).Str("node", fl.Node).Msg("fleet: failure report dropped, too many waiting")
	}
	f.mu.Unlock()
	f.poke(f.wake)
}

// fleetFailure handles another node's failure report of certificate
// fl.Cert, received at now.
func (s *server) fleetFailure(fl fleet.Failure, now time.Time) error {
	job, key, local, ok, err := s.certTarget(fl.Cert)
	if err != nil || !ok {
		return err
	}
	j := s.sched.jobOf(job)
	if j == nil {
		return nil
	}
	// When the bucket stored it, by the servers' clock: a reporter whose
	// clock is hours behind still counts now, and one ahead does not
	// extend the window. The reporter's own time only without it.
	at := fl.Stored
	if at.IsZero() {
		at = fl.At
	}
	if at.IsZero() || at.After(now) {
		at = now
	}
	_, err = s.st.AddReport(store.FaultReport{Cert: fl.Cert, Job: job.String(), Key: key, Reporter: reporterNode(fl.Reporter),
		Source: "node " + fl.Node, Reason: fl.Reason, Last: at}, maxReporters)
	if err != nil {
		return err
	}
	who, err := s.agreeing(fl.Cert, "node:", now)
	if err != nil {
		return err
	}
	if ev := s.ev(); len(who) >= ev.NodeQuorum {
		return s.fleetRevoke(fl.Cert, job, local, false, fmt.Sprintf("fleet: %d distinct nodes reported it failed within %s (%s): %s",
			len(who), ev.Window, strings.Join(who, ", "), fl.Reason))
	}
	s.log.Info().Str("cert", fl.Cert).Str("job_id", job.String()).Str("config", key).Str("node", fl.Node).Str("failed", fl.Reason).
		Msg("fleet failure report recorded; re-verifying the config before anything is revoked")
	s.queueRecheck(j, key, func(why string) {
		reason := fmt.Sprintf("fleet: node %s reported it failed (%s); reproduced by this node's verification: %s", fl.Node, fl.Reason, why)
		if err := s.fleetRevoke(fl.Cert, job, local, true, reason); err != nil {
			s.log.Error().Err(err).Str("cert", fl.Cert).Msg("fleet: revoke after a failed re-verification")
		}
	})
	return nil
}

// certTarget is the job and config of certificate id: a live one of this
// node's store (local), or a trusted fleet offer. ok is false for neither.
func (s *server) certTarget(id string) (job store.JobKey, key string, local, ok bool, err error) {
	_, meta, err := s.st.Cert(id)
	switch {
	case err == nil && meta.Revoked:
		return job, "", false, false, nil
	case err == nil:
		return meta.Job, meta.Key, true, true, nil
	case !errors.Is(err, store.ErrNotFound):
		return job, "", false, false, err
	}
	if s.fleet == nil {
		return job, "", false, false, nil
	}
	o, found := s.fleet.cl.OfferOf(id)
	if !found {
		return job, "", false, false, nil
	}
	return jobKeyOf(o.Job), o.Cert.Key, false, true, nil
}

// fleetRevoke acts on the evidence that certificate id of job fails: a
// local certificate is revoked; a fleet offer is no longer served here
// (fleetRefused, or its failed re-verification), and when this node's
// own check failed (reproduced) the failure is published. A quorum alone
// publishes nothing: echoing others' reports would make a quorum of two
// reporters everyone's.
func (s *server) fleetRevoke(id string, job store.JobKey, local, reproduced bool, reason string) error {
	if local {
		_, err := s.revoke(id, reason, runRequest{trigger: "error"})
		return err
	}
	s.log.Warn().Str("cert", id).Str("job_id", job.String()).Str("reason", reason).Msg("fleet config no longer served here")
	s.sched.changed(job)
	if s.fleet != nil {
		s.fleet.remoteChanged(fleetJobOf(job))
		if reproduced {
			s.fleet.cl.PublishFailure(id, reason)
		}
	}
	return nil
}

// fleetRefused says why fleet certificate id is not served here: a quorum
// of nodes reported it failed ("" when none did).
func (s *server) fleetRefused(id string, now time.Time) (string, error) {
	who, err := s.agreeing(id, "node:", now)
	if err != nil || len(who) < s.ev().NodeQuorum {
		return "", err
	}
	return fmt.Sprintf("%d distinct nodes reported it failed (%s)", len(who), strings.Join(who, ", ")), nil
}
