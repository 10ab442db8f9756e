package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
)

// A nearest answer serves a config certified at another problem size. The
// daemon verifies it at the size asked for, as a certification would
// (tuner.VerifyAt), before it calls it certified there: a config that
// passes gets a certificate at that problem, one that fails is recorded
// there as wrong_result and no longer answered at it. What the store holds
// of the problem's job is the record: a lookup reads it (checkedAt), so it
// holds across restarts.
//
// Since any local user may look up, verifications are bounded as
// tune_on_miss jobs are: only problems within the spec's on_miss bounds,
// on the kernel's device class; one at a time per kernel, started at most
// every missInterval; at most maxCheckQueue waiting per kernel, and at most
// maxMissJobs problems per kernel spec version that the spec does not list.
// A kernel with tune_on_miss verifies through its miss jobs instead: a
// cycle at the problem certifies a config there.

// maxCheckQueue bounds the verifications waiting per kernel.
const maxCheckQueue = 8

// errNotRunning: cycles and verifications run only between the
// scheduler's start and stop.
var errNotRunning = errors.New("the daemon is not running cycles")

// nearestChecks is the queue of verifications; its zero value is ready.
type nearestChecks struct {
	mu      sync.Mutex
	pending map[checkKey]bool          // queued or running
	queues  map[string][]checkReq      // by kernel name, oldest first
	busy    map[string]bool            // the kernel's queue has a worker
	last    map[string]time.Time       // when the kernel's last one started
	extra   map[string]map[string]bool // kernel|spec hash: unlisted problems stored or queued
	every   map[string]time.Duration   // tests: another spacing than missInterval

	// known caches checkedAt's reads, at most maxAnswers of them, so that
	// a nearest lookup costs what it did before; forget drops a job's.
	known map[checkKey]checked
	gen   uint64 // bumped by every forget

	spaces map[string]*genome.Space // validAt's, by kernel|hash|problem
}

type checked struct {
	cert *store.CertMeta
	why  string
}

// forget drops what known holds of jobs: their records changed.
func (c *nearestChecks) forget(jobs ...store.JobKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for ck := range c.known {
		if slices.Contains(jobs, ck.job) {
			delete(c.known, ck)
		}
	}
}

type checkKey struct {
	job store.JobKey // at the problem asked for
	key string       // the config
}

type checkReq struct {
	checkKey
	kern *kernel
	dims []int
	from string
	by   store.Requester
	// run, when set, runs instead of a verification at a nearest problem.
	run func(ctx context.Context)
}

// nearestAnswer answers problem from the nearest served job of pi, skipping
// exact (the kernel's own job at problem, which serves nothing yet) and
// every job whose config failed verification at problem. ok is false when
// no job is left; note then says which configs failed, for the default
// answer. missErr is why tune_on_miss added no job for problem (nil: it
// has one).
func (s *server) nearestAnswer(r *http.Request, k *kernel, pi *problemIndex, dims []int, problem, device string,
	pol *policy, exact *job, missErr error) (c api.Config, ok bool, note string, err error) {
	idx := &s.sched.index
	at := store.JobKey{Kernel: k.spec.Name, SpecHash: k.spec.Hash, Problem: problem, Device: device}
	skip := []*job{exact}
	var failed []string
	fc, fd, fok, err := s.fleetNearest(k, dims, problem, device)
	if err != nil {
		return api.Config{}, false, "", err
	}
	for {
		nearest, e, d, err := idx.nearest(s.st, pi, dims, skip...)
		if err != nil {
			return api.Config{}, false, "", err
		}
		if fok && (nearest == nil || fd < d) { // a fleet offer is nearer
			if fc.Verification == "" {
				fc.Verification = s.nearestVerification(r, k, dims, at, fc, exact, missErr)
			}
			return fc, true, "", nil
		}
		if nearest == nil {
			return api.Config{}, false, strings.Join(failed, "; "), nil
		}
		c, err := s.answer(nearest, e, api.MatchNearest, problem, pol)
		if errors.Is(err, errServedOutsideSpace) {
			skip = append(skip, nearest)
			continue
		}
		if err != nil {
			return api.Config{}, false, "", err
		}
		c.From = nearest.key.Problem
		c.Confidence = math.Exp(-d)
		passed, why, err := s.checkedAt(at, c.Key)
		if err != nil {
			return api.Config{}, false, "", err
		}
		if why == "" && passed == nil {
			// Not verified here yet: a config the problem's own
			// constraints rule out is never answered, not even while its
			// verification waits.
			why = s.sched.checks.validAt(k, nearest, dims, c.Key)
		}
		if why != "" {
			failed = append(failed, fmt.Sprintf("config %s of %s failed verification at %s: %s", c.Key, c.From, problem, why))
			skip = append(skip, nearest)
			continue
		}
		if passed != nil {
			c.Certificate, c.CertifiedFor, c.TimeMS, c.Verification = passed.ID, problem, passed.TimeMS, api.VerifyPassed
			c.DefaultMS = 0 // measured at From: no measure of this time
		} else {
			c.Verification = s.nearestVerification(r, k, dims, at, c, exact, missErr)
		}
		if len(failed) > 0 {
			c.Note = strings.Join(append(failed, c.Note), "; ")
			c.Note = strings.TrimSuffix(c.Note, "; ")
		}
		return c, true, "", nil
	}
}

// nearestVerification is the Verification of nearest answer c at job at,
// not verified there yet: the exact job's state while it waits, tuning
// through tune_on_miss, or a verification queued.
func (s *server) nearestVerification(r *http.Request, k *kernel, dims []int, at store.JobKey, c api.Config, exact *job, missErr error) string {
	switch {
	case exact != nil:
		return s.sched.exactState(exact)
	case k.spec.TuneOnMiss && missErr == nil:
		return api.VerifyTuning
	case k.spec.TuneOnMiss:
		return api.VerifyRefused + "tune_on_miss added no job for it: " + missErr.Error()
	}
	return s.sched.checkNearest(checkReq{
		checkKey: checkKey{job: at, key: c.Key}, kern: k, dims: dims, from: c.From,
		by: requester(r, s.sched.clock()),
	})
}

// checkedAt reads what the store holds of config key at job: its live
// certificate there, or why it failed there (a wrong_result trial, or a
// revoked certificate); neither when it was not verified there.
func (s *server) checkedAt(job store.JobKey, key string) (*store.CertMeta, string, error) {
	c := &s.sched.checks
	ck := checkKey{job: job, key: key}
	c.mu.Lock()
	k, ok := c.known[ck]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return k.cert, k.why, nil
	}
	cert, why, err := s.readCheckedAt(job, key)
	if err != nil {
		return nil, "", err
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.known == nil {
			c.known = map[checkKey]checked{}
		}
		if len(c.known) >= maxAnswers {
			for q := range c.known {
				delete(c.known, q)
				break
			}
		}
		c.known[ck] = checked{cert: cert, why: why}
	}
	c.mu.Unlock()
	return cert, why, nil
}

// readCheckedAt is checkedAt from the store.
func (s *server) readCheckedAt(job store.JobKey, key string) (*store.CertMeta, string, error) {
	metas, err := s.st.JobCerts(job)
	if err != nil {
		return nil, "", err
	}
	var live *store.CertMeta
	for _, m := range metas {
		if m.Key != key {
			continue
		}
		if m.Revoked {
			return nil, fmt.Sprintf("certificate %s revoked: %s", m.ID, m.Reason), nil
		}
		if live == nil || m.IssuedAt.After(live.IssuedAt) {
			live = &m
		}
	}
	views, err := s.st.ServedViews([]store.JobKey{job}, [][]string{{key}})
	if err != nil {
		return nil, "", err
	}
	if v := views[0]; v.Err != nil {
		return nil, "", v.Err
	} else if t, ok := v.Trials[key]; ok && t.Status == string(evaluate.StatusWrongResult) {
		return nil, t.Error, nil
	}
	return live, "", nil
}

// checkNearest queues the verification req, unless it is queued already
// or over a bound; it returns the answer's Verification.
func (s *scheduler) checkNearest(req checkReq) string {
	k := req.kern
	refused := func(format string, args ...any) string { return api.VerifyRefused + fmt.Sprintf(format, args...) }
	if len(k.jobs) == 0 {
		return refused("kernel %s has no jobs", k.spec.Name)
	}
	if req.job.Device != k.jobs[0].key.Device {
		return refused("the daemon measures kernel %s on device class %s", k.spec.Name, k.jobs[0].key.Device)
	}
	if _, ok := k.jobs[0].spec.Evaluator.(evaluate.Verifier); !ok {
		return refused("evaluator %q has no outputs to check", k.spec.Evaluator)
	}
	if err := k.spec.CheckMiss(req.dims); err != nil {
		return refused("%v", err)
	}
	if !s.running() {
		return refused("%v", errNotRunning)
	}
	c := &s.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[req.checkKey] {
		return api.VerifyPending
	}
	name := k.spec.Name
	if n := len(c.queues[name]); n >= maxCheckQueue {
		return refused("%d verifications are queued for kernel %s, the most", n, name)
	}
	version := name + "|" + k.spec.Hash
	if c.extra[version] == nil {
		probs, err := s.unlistedProblems(k)
		if err != nil {
			s.log.Error().Err(err).Str("kernel", name).Msg("verify at a nearest problem: count stored problems")
			return refused("%v", err)
		}
		if c.extra == nil {
			c.extra = map[string]map[string]bool{}
		}
		c.extra[version] = probs
	}
	// A problem counts once, however many configs are verified there.
	if probs := c.extra[version]; !probs[req.job.Problem] && len(probs) >= maxMissJobs {
		return refused("kernel %s has records at %d problems it does not list, the most", name, maxMissJobs)
	}
	if !s.workerLocked(name) {
		return refused("%v", errNotRunning)
	}
	c.extra[version][req.job.Problem] = true
	req.by = named(req.by)
	c.pending[req.checkKey] = true
	c.queues[name] = append(c.queues[name], req)
	s.log.Info().Str("job_id", req.job.String()).Str("config", req.key).Str("from_problem", req.from).
		Str("requested_by", requesterString(&req.by)).Msg("nearest answer: verification at the problem asked for queued")
	return api.VerifyPending
}

// workerLocked makes sure kernel name's queue has a worker; false when
// cycles are not running. Called under s.checks.mu.
func (s *scheduler) workerLocked(name string) bool {
	c := &s.checks
	if c.pending == nil {
		c.pending, c.queues, c.busy, c.last = map[checkKey]bool{}, map[string][]checkReq{}, map[string]bool{}, map[string]time.Time{}
	}
	if !c.busy[name] {
		// The worker runs under the scheduler's context, which stop waits
		// for: started as startLocked starts cycles.
		s.mu.Lock()
		ctx := s.ctx
		if ctx != nil && ctx.Err() == nil {
			c.busy[name] = true
			s.wg.Go(func() { s.runChecks(ctx, name) })
		}
		s.mu.Unlock()
	}
	return c.busy[name]
}

// queueCheck queues req, a verification at one of the kernel's own jobs
// (req.run), in the kernel's queue of verifications: it shares their
// bounds but not those of problems the spec does not list. It returns
// api.VerifyPending, or why it was refused.
func (s *scheduler) queueCheck(req checkReq) string {
	name := req.kern.spec.Name
	c := &s.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.pending[req.checkKey]:
		return api.VerifyPending
	case len(c.queues[name]) >= maxCheckQueue:
		return api.VerifyRefused + fmt.Sprintf("%d verifications are queued for kernel %s, the most", len(c.queues[name]), name)
	case !s.workerLocked(name):
		return api.VerifyRefused + errNotRunning.Error()
	}
	c.pending[req.checkKey] = true
	c.queues[name] = append(c.queues[name], req)
	return api.VerifyPending
}

// running reports whether cycles (and verifications) may start.
func (s *scheduler) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctx != nil && s.ctx.Err() == nil
}

// unlistedProblems is the set of problems k does not list at which its spec
// version has stored jobs: earlier verifications (and imports).
func (s *scheduler) unlistedProblems(k *kernel) (map[string]bool, error) {
	keys, err := s.st.Jobs()
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, j := range k.jobs {
		listed[j.key.Problem] = true
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if key.Kernel == k.spec.Name && key.SpecHash == k.spec.Hash && !listed[key.Problem] {
			seen[key.Problem] = true
		}
	}
	return seen, nil
}

// runChecks runs kernel name's queued verifications one at a time, each at
// least missInterval after the one before, until the queue is empty or ctx
// is done.
func (s *scheduler) runChecks(ctx context.Context, name string) {
	c := &s.checks
	for {
		c.mu.Lock()
		q := c.queues[name]
		if len(q) == 0 || ctx.Err() != nil {
			for _, req := range q {
				delete(c.pending, req.checkKey)
			}
			delete(c.queues, name)
			c.busy[name] = false
			c.mu.Unlock()
			return
		}
		req := q[0]
		every := missInterval
		if d, ok := c.every[name]; ok {
			every = d
		}
		wait := time.Until(c.last[name].Add(every))
		c.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				continue
			}
		}
		c.mu.Lock()
		c.queues[name] = c.queues[name][1:]
		c.last[name] = time.Now()
		c.mu.Unlock()
		if req.run != nil {
			req.run(ctx)
		} else {
			s.verifyNearest(ctx, req)
		}
		c.mu.Lock()
		delete(c.pending, req.checkKey)
		c.mu.Unlock()
		s.changed(req.job) // the kernel's answers at that problem change
	}
}

// verifyNearest verifies req's config at its problem.
func (s *scheduler) verifyNearest(ctx context.Context, req checkReq) {
	log := s.log.With().Str("job_id", req.job.String()).Str("config", req.key).Str("from_problem", req.from).
		Str("requested_by", requesterString(&req.by)).Logger()
	sj, err := req.kern.spec.JobFor(req.dims)
	if err != nil {
		log.Warn().Err(err).Msg("cannot verify at this problem")
		return
	}
	if c, ok := sj.Evaluator.(io.Closer); ok {
		defer c.Close()
	}
	if sj.Evaluator.Device() != req.job.Device {
		log.Warn().Str("device", sj.Evaluator.Device()).Msg("cannot verify at this problem: not on the kernel's device class")
		return
	}
	if err := s.st.SetRequester(req.job, req.by); err != nil {
		log.Error().Err(err).Msg("verify at this problem: record who asked")
	}
	v, err := s.tn.VerifyAt(ctx, tunerJob(req.kern.spec, req.job, sj), req.key)
	switch {
	case errors.Is(err, context.Canceled):
		log.Info().Msg("verification at this problem cancelled")
	case err != nil:
		log.Error().Err(err).Msg("verification at this problem failed to run")
	case v.Passed:
		log.Info().Str("cert", v.Cert).Float64("time_ms", v.TimeMS).Msg("nearest config verified at this problem")
	default:
		log.Warn().Str("failed", v.Why).Msg("nearest config failed verification at this problem; no longer answered there")
	}
}

// validAt says why config key, served by job from at its own problem, is
// not a config of k at dims ("" when it is one): a parameter value or a
// constraint at dims rules it out.
func (c *nearestChecks) validAt(k *kernel, from *job, dims []int, key string) string {
	if from.spec.Evaluator == nil {
		return ""
	}
	sp, err := c.spaceAt(k, from.spec.Evaluator, dims)
	if err != nil {
		return fmt.Sprintf("no space at this problem: %v", err)
	}
	cfg, err := sp.ParseKey(key)
	if err == nil {
		err = sp.Check(cfg)
	}
	if err != nil {
		return fmt.Sprintf("not a valid config at this problem: %v", err)
	}
	return ""
}

// spaceAt is k's space at dims on ev, one of its jobs' evaluators, built
// without starting an evaluator (spec.SpaceAt) and cached per kernel
// version and problem, at most maxAnswers of them.
func (c *nearestChecks) spaceAt(k *kernel, ev evaluate.Evaluator, dims []int) (*genome.Space, error) {
	id := k.spec.Name + "|" + k.spec.Hash + "|" + evaluate.Problem{Dims: dims}.String()
	c.mu.Lock()
	sp, ok := c.spaces[id]
	c.mu.Unlock()
	if ok {
		return sp, nil
	}
	sp, err := k.spec.SpaceAt(ev, dims)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.spaces == nil || len(c.spaces) >= maxAnswers {
		c.spaces = map[string]*genome.Space{}
	}
	c.spaces[id] = sp
	c.mu.Unlock()
	return sp, nil
}
