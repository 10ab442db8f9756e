package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

// Evidence before revocation. Any local uid may report an error (POST
// /v1/observations), and a fleet node may be wrong or broken, so a report
// does not revoke by itself. It is recorded (store reports/: who reported
// what, when), and then the certificate is revoked when
//
//   - reporters of its kind agree: Evidence.UIDQuorum distinct uids, or
//     Evidence.NodeQuorum distinct fleet nodes, each reporting within
//     Evidence.Window; or
//   - this node's own check fails: the daemon re-verifies the config at
//     its job with the checks its certification made (tuner.Recheck),
//     queued and bounded as nearest verifications are (one at a time per
//     kernel, missInterval apart, maxCheckQueue waiting), and a config is
//     re-verified at most once per Evidence.Recheck (a report in between
//     waits for the next one).
//
// A report from a uid that may write (root, the daemon's uid, --operator,
// group quasim) revokes at once, as `quasimctl certs revoke` would: that
// uid could revoke the certificate anyway.

// Evidence configures what revokes a certificate on reports.
type Evidence struct {
	UIDQuorum  int           // distinct local uids whose reports revoke (default DefaultUIDQuorum)
	NodeQuorum int           // distinct fleet nodes whose failure reports revoke (default DefaultNodeQuorum)
	Window     time.Duration // reports older than this do not count (default DefaultReportWindow)
	Recheck    time.Duration // a config is re-verified at most once per this (default DefaultRecheck)
}

// Evidence defaults.
const (
	DefaultUIDQuorum    = 3
	DefaultNodeQuorum   = 2
	DefaultReportWindow = time.Hour
	DefaultRecheck      = 10 * time.Minute
	// maxReporters bounds the reports kept per certificate.
	maxReporters = 64
)

func (e *Evidence) defaults() {
	if e.UIDQuorum == 0 {
		e.UIDQuorum = DefaultUIDQuorum
	}
	if e.NodeQuorum == 0 {
		e.NodeQuorum = DefaultNodeQuorum
	}
	if e.Window == 0 {
		e.Window = DefaultReportWindow
	}
	if e.Recheck == 0 {
		e.Recheck = DefaultRecheck
	}
}

func (e *Evidence) validate() error {
	var errs []error
	// A quorum of one is one reporter: the thing this guards against.
	if e.UIDQuorum != 0 && e.UIDQuorum < 2 {
		errs = append(errs, fmt.Errorf("error-quorum %d: want 2 or more distinct uids", e.UIDQuorum))
	}
	if e.NodeQuorum != 0 && e.NodeQuorum < 2 {
		errs = append(errs, fmt.Errorf("fleet-failure-quorum %d: want 2 or more distinct nodes", e.NodeQuorum))
	}
	if e.Window < 0 {
		errs = append(errs, fmt.Errorf("report-window %s: must not be negative", e.Window))
	}
	if e.Recheck < 0 {
		errs = append(errs, fmt.Errorf("recheck-every %s: must not be negative", e.Recheck))
	}
	return errors.Join(errs...)
}

// ev is the server's Evidence with its defaults.
func (s *server) ev() Evidence {
	s.evMu.Lock()
	e := s.evidence
	s.evMu.Unlock()
	e.defaults()
	return e
}

// setRecheck sets Evidence.Recheck while reports may be handled.
func (s *server) setRecheck(d time.Duration) {
	s.evMu.Lock()
	s.evidence.Recheck = d
	s.evMu.Unlock()
}

// rechecks is the server's state of re-verifications; its zero value is
// ready.
type rechecks struct {
	mu     sync.Mutex
	last   map[checkKey]time.Time   // when the config's last re-verification started
	queued map[checkKey]bool        // queued or running
	later  map[checkKey]*time.Timer // waits for its turn, due at due[ck]
	due    map[checkKey]time.Time
	run    int // re-verifications run
	failed int // of them, failed
}

// reporterUID and reporterNode name reporters in the store.
func reporterUID(uid uint32) string   { return fmt.Sprintf("uid:%d", uid) }
func reporterNode(node string) string { return "node:" + node }

// agreeing are the reporters of cert whose prefix is kind ("uid:" or
// "node:") that reported within the window before now.
func (s *server) agreeing(cert, kind string, now time.Time) ([]string, error) {
	reps, err := s.st.Reports(cert)
	if err != nil {
		return nil, err
	}
	var who []string
	since := now.Add(-s.ev().Window)
	for _, r := range reps {
		if strings.HasPrefix(r.Reporter, kind) && !r.Last.Before(since) {
			who = append(who, r.Reporter)
		}
	}
	slices.Sort(who)
	return who, nil
}

// reportError takes a runtime's error report from uid (operator: a uid
// that may write). It returns the certificates revoked and those whose
// config is being re-verified because of it.
func (s *server) reportError(rep errorReport, uid uint32, operator bool, now time.Time) (revoked, checking []string, err error) {
	ids, err := s.overBound(rep)
	if err != nil || len(ids) == 0 {
		return nil, nil, err
	}
	if operator {
		return s.applyError(rep, fmt.Sprintf("reported by operator uid %d", uid))
	}
	var quorum []string
	for _, id := range ids {
		_, err := s.st.AddReport(store.FaultReport{Cert: id, Job: rep.j.key.String(), Key: rep.key, Reporter: reporterUID(uid),
			Source: rep.source, Error: rep.err, Count: rep.n, Last: now}, maxReporters)
		if err != nil {
			return nil, nil, err
		}
		who, err := s.agreeing(id, "uid:", now)
		if err != nil {
			return nil, nil, err
		}
		if len(who) >= s.ev().UIDQuorum {
			quorum = who
		}
	}
	if quorum != nil {
		return s.applyError(rep, fmt.Sprintf("%d distinct uids reported it within %s (%s)", len(quorum), s.ev().Window, strings.Join(quorum, ", ")))
	}
	s.log.Info().Str("job_id", rep.j.key.String()).Str("config", rep.key).Uint32("uid", uid).Float64("error", rep.err).
		Strs("certs", ids).Msg("error report recorded; re-verifying the config before anything is revoked")
	if s.queueRecheck(rep.j, rep.key, func(why string) {
		if _, _, err := s.applyError(rep, "reproduced by this node's verification: "+why); err != nil {
			s.log.Error().Err(err).Str("job_id", rep.j.key.String()).Msg("revoke after a failed re-verification")
		}
	}) {
		checking = ids
	}
	return nil, checking, nil
}

// overBound are the live certificates rep's error is above the bound of:
// the job's certificate of rep's config, and the zoned maps with a stage
// at it.
func (s *server) overBound(rep errorReport) ([]string, error) {
	var ids []string
	m, _, limit, ok, err := s.liveBound(rep)
	if err != nil {
		return nil, err
	}
	if ok && rep.err > limit {
		ids = append(ids, m.ID)
	}
	if s.zoner != nil {
		zs, err := s.zoner.checkError(rep, "", false)
		if err != nil {
			return nil, err
		}
		ids = append(ids, zs...)
	}
	return ids, nil
}

// applyError revokes what rep's error is above the bound of, saying why
// the daemon believed it.
func (s *server) applyError(rep errorReport, why string) (revoked, checking []string, err error) {
	id, err := s.checkError(rep, why)
	if err != nil {
		return nil, nil, err
	}
	if id != "" {
		revoked = append(revoked, id)
	}
	if s.zoner == nil {
		return revoked, nil, nil
	}
	ids, err := s.zoner.checkError(rep, why, true)
	revoked = append(revoked, ids...)
	if s.metrics != nil && len(ids) > 0 {
		s.metrics.errorRevoked(rep.j.key.Kernel)
	}
	return revoked, nil, err
}

// queueRecheck queues the re-verification of config key at job j, unless
// one is queued already; within Evidence.Recheck of the last one it waits
// for its turn. failed is called when the check fails. It reports whether
// a re-verification is queued or waits.
func (s *server) queueRecheck(j *job, key string, failed func(why string)) bool {
	ck := checkKey{job: j.key, key: key}
	rc := &s.rechecks
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.queued == nil {
		rc.queued, rc.last, rc.later, rc.due = map[checkKey]bool{}, map[checkKey]time.Time{}, map[checkKey]*time.Timer{}, map[checkKey]time.Time{}
	}
	if rc.queued[ck] {
		return true
	}
	queue := func() bool { // under rc.mu
		delete(rc.later, ck)
		delete(rc.due, ck)
		dims, _ := j.kern.parseProblem(j.key.Problem)
		state := s.sched.queueCheck(checkReq{checkKey: ck, kern: j.kern, dims: dims, from: j.key.Problem,
			run: func(ctx context.Context) { s.recheck(ctx, j, key, failed) }})
		if state != api.VerifyPending {
			s.log.Warn().Str("job_id", j.key.String()).Str("config", key).Str("state", state).Msg("error report: re-verification not queued")
			return false
		}
		rc.queued[ck] = true
		return true
	}
	due := rc.last[ck].Add(s.ev().Recheck)
	if !time.Now().Before(due) {
		if t := rc.later[ck]; t != nil {
			t.Stop()
		}
		return queue()
	}
	if t := rc.later[ck]; t != nil && !due.Before(rc.due[ck]) {
		return true
	} else if t != nil {
		t.Stop()
	}
	rc.due[ck] = due
	rc.later[ck] = time.AfterFunc(time.Until(due), func() {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.due[ck].Equal(due) {
			queue()
		}
	})
	return true
}

// recheck re-verifies config key at job j (tuner.Recheck); a failure is
// recorded wrong_result there and handed to failed.
func (s *server) recheck(ctx context.Context, j *job, key string, failed func(why string)) {
	ck := checkKey{job: j.key, key: key}
	rc := &s.rechecks
	rc.mu.Lock()
	rc.last[ck] = time.Now()
	rc.run++
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		delete(rc.queued, ck)
		rc.mu.Unlock()
	}()
	log := s.log.With().Str("job_id", j.key.String()).Str("config", key).Logger()
	dims, err := j.kern.parseProblem(j.key.Problem)
	if err != nil {
		log.Warn().Err(err).Msg("cannot re-verify")
		return
	}
	sj, err := j.kern.spec.JobFor(dims)
	if err != nil {
		log.Warn().Err(err).Msg("cannot re-verify")
		return
	}
	if c, ok := sj.Evaluator.(io.Closer); ok {
		defer c.Close()
	}
	v, err := s.sched.tn.Recheck(ctx, tunerJob(j.kern.spec, j.key, sj), key)
	switch {
	case errors.Is(err, context.Canceled):
		log.Info().Msg("re-verification cancelled")
	case err != nil:
		log.Error().Err(err).Msg("re-verification failed to run")
	case v.Passed:
		log.Info().Float64("time_ms", v.TimeMS).Msg("re-verified after a report: passed; nothing revoked")
	default:
		rc.mu.Lock()
		rc.failed++
		rc.mu.Unlock()
		log.Warn().Str("failed", v.Why).Msg("re-verified after a report: failed")
		s.sched.changed(j.key)
		failed(v.Why)
	}
}
