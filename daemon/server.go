package daemon

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/tuner"
	"github.com/quasim/quasim/introspect"
)

// server is the daemon's side of the socket API: the route table's
// handlers, over the scheduler, the store and the rest of the lifecycle.
// api (sockapi) serves them.
type server struct {
	sched    *scheduler
	st       *store.Store
	api      *sockapi.Server // authorisation and rate limits; nil in tests that serve none
	log      zerolog.Logger
	version  string
	started  time.Time
	stateDir string
	specDir  string
	reload   func() api.ReloadResponse
	pub      ed25519.PublicKey
	keyID    string

	memgraph *memPlanner // POST /v1/memgraph/plan's bounds and slots; nil: the defaults

	metrics *metrics         // nil in tests that need none
	gpus    *introspect.GPUs // the open NVML session; nil without one
	lockDir string           // the devices' flock files; empty for none
	// lockDevice takes a device's exclusive lock, as cycles do.
	lockDevice func(ctx context.Context, device string) (func(), error)

	ceilings *ceilings      // the roofs measured per device class
	opencl   *openclDevices // the OpenCL worker's devices; nil in tests that need none
	fleet    *fleetNode     // nil without a fleet
	zoner    *zoner         // zoned pipelines' precision maps; nil in tests that need none

	evMu     sync.Mutex // guards evidence, which tests change while reports run
	evidence Evidence   // what revokes a certificate on reports (evidence.go)
	rechecks rechecks
}

// Hit is the answer cached for key under kernel's index, when the index
// is the loaded kernel's and up to date (sockapi.Lookups).
func (s *server) Hit(kernel string, key []byte) (sockapi.Answer, bool) {
	k, ok := s.sched.kernel(kernel)
	if !ok {
		return sockapi.Answer{}, false
	}
	return s.sched.index.hit(k, key)
}

// Changed is closed at the next change of a served config or kernel.
func (s *server) Changed() <-chan struct{} { return s.sched.epoch.Changed() }

// Answer is the encoded config answer for r, from the kernel's
// cache in the lookup index while none of its jobs changes.
func (s *server) Answer(r *http.Request, q url.Values, key string) (sockapi.Answer, error) {
	var a sockapi.Answer
	name := r.PathValue("kernel")
	k, ok := s.sched.kernel(name)
	if !ok {
		return a, sockapi.NotFoundf("kernel %q is not loaded", name)
	}
	idx := &s.sched.index
	ver := idx.version()
	ki, err := idx.kernel(s.st, k)
	if err != nil {
		return a, err
	}
	if a, ok := idx.cached(ki, key); ok {
		return a, nil
	}
	c, err := s.config(r, ki, q)
	if err != nil {
		return a, err
	}
	if s.zoner != nil {
		c.Zones = s.zoner.stages(name)
	}
	body, err := json.Marshal(c)
	if err != nil {
		return a, err
	}
	sum := sha256.Sum256(body)
	a = sockapi.Answer{Body: append(body, '\n'), ETag: []string{`"` + hex.EncodeToString(sum[:8]) + `"`}}
	if s.metrics != nil {
		a.Counter = s.metrics.lookupCounter(name, c.Match)
	}
	// An answer that a later lookup may change without any job changing
	// is not kept: a miss of a tune_on_miss kernel (the job it may add is
	// rate-limited: a later lookup tries again) and a refused
	// verification (the queue or the rate may have room later).
	// A waiting answer turns to tuning when the job's cycle starts, which
	// changes no job either.
	if !(k.spec.TuneOnMiss && c.Match != api.MatchExact) && !strings.HasPrefix(c.Verification, api.VerifyRefused) &&
		!strings.HasPrefix(c.Verification, api.VerifyWaiting) && c.Verification != api.VerifyTuning {
		idx.cache(ki, ver, key, a)
	}
	return a, nil
}

// apiConfig is what sockapi serves of s, as s's fields are now: the
// route table, the lookups, and the routes that check their callers
// themselves.
func (s *server) apiConfig() sockapi.Config {
	c := sockapi.Config{Version: s.version, Log: s.log, Routes: s.routes(), Lookups: s,
		Cert: s.getCert, MemgraphPlan: s.memgraphHandler()}
	if s.metrics != nil {
		c.Metrics = s.metrics.handler()
	}
	return c
}

// routes is the route table, sorted by pattern (TestRoutesSorted checks).
func (s *server) routes() []sockapi.Route {
	return []sockapi.Route{
		{Pattern: api.RouteCausal, Right: sockapi.Read, Handle: s.getCausal},
		{Pattern: api.RouteCausalExperiment, Right: sockapi.Write, Handle: s.postExperiment},
		{Pattern: api.RouteCausalExperiments, Right: sockapi.Read, Handle: s.getExperiments},
		{Pattern: api.RouteCerts, Right: sockapi.Read, Handle: s.getCerts},
		{Pattern: api.RouteCertPubkey, Right: sockapi.Read, Handle: s.getPubkey},
		{Pattern: api.RouteCertRevoke, Right: sockapi.Write, Handle: s.postRevoke},
		{Pattern: api.RouteConfig, Right: sockapi.Read, Handle: s.getConfig},
		{Pattern: api.RouteDevices, Right: sockapi.Read, Handle: s.getDevices},
		{Pattern: api.RouteFleet, Right: sockapi.Read, Handle: s.getFleet},
		{Pattern: api.RouteKernels, Right: sockapi.Read, Handle: s.getKernels},
		{Pattern: api.RouteKernelCycles, Right: sockapi.Read, Handle: s.getCycles},
		{Pattern: api.RouteImport, Right: sockapi.Write, Handle: s.postImport},
		{Pattern: api.RouteKernelTrials, Right: sockapi.Read, Handle: s.getTrials},
		{Pattern: api.RouteKernelTune, Right: sockapi.Write, Handle: s.postTune},
		{Pattern: api.RouteObservations, Right: sockapi.Observe, Handle: s.postObservations},
		{Pattern: api.RouteOpenAPI, Right: sockapi.Read, Handle: func(*http.Request) (any, error) { return json.RawMessage(api.OpenAPI), nil }},
		{Pattern: api.RoutePipelineZoning, Right: sockapi.Read, Handle: s.getZoning},
		{Pattern: api.RoutePipelineRezone, Right: sockapi.Write, Handle: s.postRezone},
		{Pattern: api.RouteReload, Right: sockapi.Write, Handle: s.postReload},
		{Pattern: api.RouteSpans, Right: sockapi.Observe, Handle: s.postSpans},
		{Pattern: api.RouteStatus, Right: sockapi.Read, Handle: s.getStatus},
	}
}

func (s *server) getStatus(*http.Request) (any, error) {
	ks, errs := s.sched.snapshot()
	st := api.Status{
		Version: s.version, Started: s.started, UptimeS: time.Since(s.started).Seconds(),
		StateDir: s.stateDir, SpecDir: s.specDir, Kernels: len(ks),
		SpecError: errs,
	}
	st.Running, st.Waiting = s.sched.runningJobs()
	st.Stale = []api.Stale{}
	st.Failing = []api.Failing{}
	stored, err := s.storedJobs()
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		for _, j := range s.listed(k, stored) {
			st.Jobs++
			n, err := s.st.TrialCount(j.key)
			if err != nil {
				return nil, err
			}
			st.Trials += n
			if e, err := s.sched.index.entry(s.st, j); err != nil {
				return nil, err
			} else if e.HasServed && e.Served.Stale != "" {
				st.Stale = append(st.Stale, api.Stale{Job: j.key.String(), Reason: e.Served.Stale, Since: e.Served.StaleAt})
			}
			if err := s.health(&st, j); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(st.Failing, func(a, b int) bool { return st.Failing[a].At.After(st.Failing[b].At) })
	if st.Running == nil {
		st.Running = []string{}
	}
	if st.Waiting == nil {
		st.Waiting = []string{}
	}
	if st.SpecError == nil {
		st.SpecError = []string{}
	}
	st.Pipelines = []api.Pipeline{}
	for _, p := range s.sched.pipelines() {
		st.Pipelines = append(st.Pipelines, pipelineInfo(p))
	}
	return st, nil
}

// health adds j's newest ended cycle to st when it failed, and its last
// successful one to st.LastSuccess.
func (s *server) health(st *api.Status, j *job) error {
	last, ok, err := s.st.LastCycle(j.key, true)
	if err != nil || !ok {
		return err
	}
	done, okDone, err := s.st.LastCycleWhere(j.key, func(c store.Cycle) bool { return c.State == "done" })
	if err != nil {
		return err
	}
	var lastDone *time.Time
	if okDone {
		t := done.Ended
		lastDone = &t
		if st.LastSuccess == nil || t.After(*st.LastSuccess) {
			st.LastSuccess = &t
		}
	}
	if last.State != "failed" {
		return nil
	}
	f := api.Failing{Job: j.key.String(), Cycle: last.ID, At: last.Ended, Error: last.Error, LastSuccess: lastDone, Since: last.Ended}
	// Since: the oldest failed cycle after the newest done one.
	if _, _, err := s.st.LastCycleWhere(j.key, func(c store.Cycle) bool {
		if c.State == "failed" && !c.Ended.IsZero() {
			f.Since = c.Ended
		}
		return c.State == "done"
	}); err != nil {
		return err
	}
	f.RetryAt = s.sched.retryTime(j)
	st.Failing = append(st.Failing, f)
	return nil
}

func (s *server) getKernels(r *http.Request) (any, error) {
	if q := r.URL.Query(); q.Has("limit") || q.Has("cursor") {
		return s.kernelsPage(r)
	}
	ks, _ := s.sched.snapshot()
	next := s.sched.nextRuns()
	out := make([]api.Kernel, 0, len(ks))
	stored, err := s.storedJobs()
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		ak := kernelInfo(k)
		for _, j := range s.listed(k, stored) {
			aj, err := s.jobInfo(j, next)
			if err != nil {
				return nil, err
			}
			ak.Jobs = append(ak.Jobs, aj)
		}
		out = append(out, ak)
	}
	return out, nil
}

// kernelInfo is k's entry of GET /v1/kernels, without its jobs.
func kernelInfo(k *kernel) api.Kernel {
	ak := api.Kernel{
		Name: k.spec.Name, SpecHash: k.spec.Hash, Source: k.spec.Source, Evaluator: k.spec.Evaluator,
		Schedule: k.spec.Schedule, Objective: k.spec.Objective, Jobs: []api.Job{},
	}
	if len(k.jobs) > 0 {
		for _, p := range k.jobs[0].spec.Space.Params() {
			ak.Params = append(ak.Params, p.Name)
		}
		// Counted, never listed: a space may hold billions of configs.
		if n, ok := k.jobs[0].spec.Space.Count(); ok && n <= math.MaxInt {
			ak.Configs = int(n)
		} else {
			ak.Notes = append(ak.Notes, "the space's constraints are too wide to count its valid configs; configs 0 means unknown")
		}
	}
	for _, j := range k.jobs {
		if n := j.spec.DefaultNote; n != "" && !slices.Contains(ak.Notes, n) {
			ak.Notes = append(ak.Notes, n)
		}
	}
	return ak
}

func (s *server) jobInfo(j *job, nextRuns map[cron.EntryID]time.Time) (api.Job, error) {
	n, err := s.st.TrialCount(j.key)
	if err != nil {
		return api.Job{}, err
	}
	v := s.sched.view(j)
	aj := api.Job{ID: j.key.String(), Problem: j.key.Problem, Device: j.key.Device, Trials: n, Running: v.running, Foreign: j.foreign, RequestedBy: requesterString(j.requestedBy), Held: v.held}
	if next := nextRuns[v.entry]; v.entry != 0 && !next.IsZero() {
		aj.NextCycle = &next
	}
	if v.running && v.live.Budget > 0 {
		aj.BudgetLeft = v.live.Budget - v.live.Evals
	}
	if w, ok := j.spec.Evaluator.(evaluate.Worker); ok {
		if wk, ok := w.Work(j.spec.Problem); ok {
			aj.Work = &api.Work{Flops: wk.Flops, Bytes: wk.Bytes}
		}
	}
	if e, err := s.sched.index.entry(s.st, j); err != nil {
		return aj, err
	} else if e.HasServed {
		c, err := s.answer(j, e, api.MatchExact, j.key.Problem, nil)
		switch {
		case errors.Is(err, errServedOutsideSpace):
		case err != nil:
			return aj, err
		default:
			aj.Served = &c
		}
	}
	if last, ok, err := s.st.LastCycle(j.key, true); err != nil {
		return aj, err
	} else if ok {
		aj.LastCycle = &last.Ended
	}
	if p, ok, err := s.st.Prior(j.key); err != nil {
		return aj, err
	} else if ok {
		aj.Prior = &api.Prior{From: p.From, Sources: p.Sources, Ranked: p.Ranked, At: p.At}
	}
	return aj, nil
}

// getConfig answers a runtime: the exact job's served config, else the
// served config of the nearest tuned problem size, else the default. The
// socket serves it through cachedConfig.
func (s *server) getConfig(r *http.Request) (any, error) {
	name := r.PathValue("kernel")
	k, ok := s.sched.kernel(name)
	if !ok {
		return nil, sockapi.NotFoundf("kernel %q is not loaded", name)
	}
	ki, err := s.sched.index.kernel(s.st, k)
	if err != nil {
		return nil, err
	}
	c, err := s.config(r, ki, r.URL.Query())
	if err == nil && s.zoner != nil {
		c.Zones = s.zoner.stages(name)
	}
	return c, err
}

// config answers the query q of the kernel ki indexes from the index.
func (s *server) config(r *http.Request, ki *kernelIndex, q url.Values) (api.Config, error) {
	k := ki.k
	name := k.spec.Name
	if len(k.jobs) == 0 {
		return api.Config{}, sockapi.NotFoundf("kernel %q has no jobs", name)
	}
	problem := q.Get("problem")
	device := q.Get("device")
	if device == "" {
		device = k.jobs[0].key.Device
	}
	if problem == "" {
		if len(k.jobs) > 1 {
			return api.Config{}, sockapi.Invalidf("problem: kernel %q has %d problems (%s); name one", name, len(k.jobs), problemList(k))
		}
		problem = k.jobs[0].key.Problem
	}
	dims, err := k.parseProblem(problem)
	if err != nil {
		return api.Config{}, err
	}
	problem = evaluate.Problem{Dims: dims}.String()
	pol, err := parsePolicy(q)
	if err != nil {
		return api.Config{}, err
	}
	idx := &s.sched.index
	var exact *job
	var note string // why no nearest config is answered
	if pi := ki.devices[device][len(dims)]; pi != nil {
		if j := pi.exact[problem]; j != nil {
			e, err := idx.entry(s.st, j)
			if err != nil {
				return api.Config{}, err
			}
			if e.HasServed {
				c, err := s.answer(j, e, api.MatchExact, problem, pol)
				if !errors.Is(err, errServedOutsideSpace) {
					return c, err
				}
			}
			if c, ok, err := s.fleetAnswer(j, problem); err != nil || ok {
				return c, err
			}
			exact = j
		}
		// No exact answer: a spec with tune_on_miss gets a job for this
		// problem (once, rate-limited), so a later lookup is exact.
		missErr := errNotRunning
		if k.spec.TuneOnMiss && device == k.jobs[0].key.Device {
			missErr = s.sched.miss(name, dims, requester(r, s.sched.clock()))
		}
		// The nearest answer's config is verified at this problem (see
		// nearest.go); one that failed here falls back.
		c, ok, failed, err := s.nearestAnswer(r, k, pi, dims, problem, device, pol, exact, missErr)
		if err != nil || ok {
			return c, err
		}
		note = failed
	} else if k.spec.TuneOnMiss && device == k.jobs[0].key.Device {
		s.sched.miss(name, dims, requester(r, s.sched.clock()))
	}
	j := k.jobs[0]
	if jj := ki.defaults[problem]; jj != nil {
		j = jj
	}
	c := api.Config{
		Kernel: name, Problem: problem, Device: device, Match: api.MatchDefault, SpecHash: k.spec.Hash,
		Config: j.spec.Space.WireConfigMap(j.spec.Default), Key: j.spec.Space.Key(j.spec.Default), Note: note,
	}
	return c, nil
}

func problemList(k *kernel) string {
	var ps []string
	for _, j := range k.jobs {
		ps = append(ps, j.key.Problem)
	}
	return strings.Join(ps, "; ")
}

// logDistance is the distance between problem sizes on a log scale, so
// 512 is as far from 1024 as 1024 is from 2048.
func logDistance(a, b []int) float64 {
	d := 0.0
	for i := range a {
		d += math.Abs(math.Log(float64(max(a[i], 1))) - math.Log(float64(max(b[i], 1))))
	}
	return d
}

// errServedOutsideSpace says a job's served config is not in its space
// now: it was certified before the kernel's parameters changed (a builtin
// kernel that gained a parameter). The job is answered as if nothing were
// served until a cycle certifies a config of the current space.
var errServedOutsideSpace = errors.New("not a config of the current space")

// answer is the api.Config of job j's served config (or the point of its
// front pol chooses) from its lookup entry, with no trial decoded.
func (s *server) answer(j *job, e *servedEntry, match api.Match, problem string, pol *policy) (api.Config, error) {
	sv := e.Served
	front, note := pol.choose(sv)
	if front != nil {
		sv.Key, sv.TimeMS, sv.Certificate = front.chosen.Key, front.chosen.TimeMS, front.chosen.Certificate
	}
	c, err := j.spec.Space.ParseKey(sv.Key)
	if err != nil {
		return api.Config{}, fmt.Errorf("served config of %s: %w: %v", j.key, errServedOutsideSpace, err)
	}
	at := sv.PromotedAt
	out := api.Config{
		Kernel: j.key.Kernel, Problem: problem, Device: j.key.Device, Config: j.spec.Space.WireConfigMap(c),
		Key: sv.Key, Match: match, TimeMS: sv.TimeMS, Certificate: sv.Certificate, SpecHash: j.key.SpecHash,
		PromotedAt: &at, Stale: sv.Stale, Note: note, DefaultMS: e.defaultMS,
	}
	if sv.Key == e.Served.Key { // the served config, not another point of its front
		out.TimeCILowMS, out.TimeCIHighMS = sv.CILowMS, sv.CIHighMS
		if x := sv.Speedup; x != nil {
			out.Speedup = &api.Speedup{Baseline: x.Baseline, Ratio: x.Ratio, Low: x.Low, High: x.High, Rounds: x.Rounds}
		}
	}
	if front != nil {
		out.Front = &front.FrontChoice
	}
	if out.Certificate != "" {
		out.CertifiedFor = j.key.Problem // the job's certificates are of its problem
	}
	if t, ok := e.trial(sv.Key); ok {
		at := apiTrial(t, j)
		out.Trial = &at
	}
	return out, nil
}

func apiTrial(t store.Trial, j *job) api.Trial {
	return api.Trial{
		Key: t.Key, Status: t.Status, TimeMS: t.TimeMS, TimesMS: t.TimesMS, CostS: t.CostS, Error: t.Error,
		At: t.At, Problem: j.key.Problem, Device: j.key.Device, Cycle: t.Cycle,
		EnergyMJ: t.EnergyMJ, PowerW: t.PowerW, Throttle: t.Throttle, Remeasured: t.Remeasured,
		MaxTempC: t.MaxTempC, SMClockMHz: t.SMClockMHz, MemClockMHz: t.MemClockMHz, UtilPct: t.UtilPct,
		PhasesMS: t.PhasesMS, Observables: t.Observables,
	}
}

// jobsOf returns the kernel's jobs, all or those of one problem.
func (s *server) jobsOf(name, problem string) (*kernel, []*job, error) {
	k, ok := s.sched.kernel(name)
	if !ok {
		return nil, nil, sockapi.NotFoundf("kernel %q is not loaded", name)
	}
	if problem == "" {
		return k, k.jobs, nil
	}
	dims, err := k.parseProblem(problem)
	if err != nil {
		return nil, nil, err
	}
	p := evaluate.Problem{Dims: dims}.String()
	var out []*job
	for _, j := range k.jobs {
		if j.key.Problem == p {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return nil, nil, sockapi.NotFoundf("kernel %q has no problem %s (have %s)", name, p, problemList(k))
	}
	return k, out, nil
}

func (s *server) getCycles(r *http.Request) (any, error) {
	name := r.PathValue("kernel")
	jobs, err := s.listedOf(name, r.URL.Query().Get("problem"))
	if err != nil {
		return nil, err
	}
	out := api.Cycles{Kernel: name, Cycles: []api.Cycle{}}
	for _, j := range jobs {
		cycles, err := s.st.Cycles(j.key)
		if err != nil {
			return nil, err
		}
		cycles, unsaved := withUnsaved(cycles, s.sched.unsavedOf(j))
		v := s.sched.view(j)
		for _, c := range cycles {
			switch {
			case v.running && v.live.ID == c.ID:
				c = v.live // fresher than the last checkpoint only by the in-memory state
			case !v.running && (c.State == "running" || c.State == "waiting"):
				c.State = tuner.Unfinished // left so by a crash; the job's next cycle resumes it
			}
			ac := api.Cycle{
				ID: c.ID, Job: j.key.String(), Kernel: name, Problem: j.key.Problem, Device: j.key.Device,
				Trigger: c.Trigger, State: c.State, Started: c.Started, Budget: c.Budget, BudgetS: c.BudgetS, Budgeted: c.Budgeted,
				Evals: c.Evals, BestKey: c.BestKey, BestMS: c.BestMS, Promoted: c.Promoted, Error: c.Error,
				Strategy: c.Strategy, Allocation: c.Allocation, WaitedS: c.WaitedS, Busy: c.Busy,
				Unsaved: unsaved[c.ID],
			}
			if !c.Ended.IsZero() {
				e := c.Ended
				ac.Ended = &e
			}
			out.Cycles = append(out.Cycles, ac)
		}
	}
	return out, nil
}

func (s *server) postTune(r *http.Request) (any, error) {
	var req api.TuneRequest
	if err := sockapi.DecodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Budget < 0 {
		return nil, sockapi.Invalidf("budget %d: must not be negative", req.Budget)
	}
	name := r.PathValue("kernel")
	k, jobs, err := s.jobsOf(name, req.Problem)
	if err != nil {
		return nil, err
	}
	if k.spec.Evaluator == "" {
		return nil, sockapi.Invalidf("kernel %q has no evaluator: it is served, not tuned", name)
	}
	resp := api.TuneResponse{Kernel: name}
	for _, j := range jobs {
		rr := runRequest{trigger: "api"}
		if req.Budget > 0 {
			rr.budget = tuner.Budget{Evals: req.Budget}
		}
		switch err := s.sched.trigger(j.key.String(), rr); {
		case errors.Is(err, errStopping):
			return nil, fmt.Errorf("%w: %v", api.ErrUnavailable, err)
		case err != nil:
			return nil, fmt.Errorf("%w: job %s was reloaded away", api.ErrConflict, j.key)
		}
		resp.Jobs = append(resp.Jobs, j.key.String())
	}
	return resp, nil
}

func (s *server) postImport(r *http.Request) (any, error) {
	var req api.ImportRequest
	if err := sockapi.DecodeBody(r, &req); err != nil {
		return nil, err
	}
	name := r.PathValue("kernel")
	if req.Problem == "" {
		return nil, sockapi.Invalidf("problem: required")
	}
	_, jobs, err := s.jobsOf(name, req.Problem)
	if err != nil {
		return nil, err
	}
	j := jobs[0]
	key := j.key
	if req.Device != "" {
		if strings.ContainsAny(req.Device, "|\n") {
			return nil, sockapi.Invalidf("device %q: must not contain | or a newline", req.Device)
		}
		key.Device = req.Device
	}
	var trials []store.Trial
	skipped := 0
	for i, t := range req.Trials {
		if c, err := j.spec.Space.ParseKey(t.Key); err != nil || !j.spec.Space.Valid(c) {
			skipped++
			continue
		}
		if _, err := evaluate.ParseStatus(t.Status); err != nil {
			return nil, sockapi.Invalidf("trials[%d].status: %v", i, err)
		}
		if t.Status == string(evaluate.StatusOK) && !(t.TimeMS > 0) {
			return nil, sockapi.Invalidf("trials[%d].time_ms: %v is not a positive time", i, t.TimeMS)
		}
		trials = append(trials, store.Trial{Key: t.Key, Status: t.Status, TimeMS: t.TimeMS, TimesMS: t.TimesMS, CostS: t.CostS, Error: t.Error, At: t.At,
			EnergyMJ: t.EnergyMJ, PowerW: t.PowerW, PhasesMS: t.PhasesMS, Observables: t.Observables})
	}
	stored, err := s.st.AddTrials(key, trials)
	if err != nil {
		return nil, err
	}
	s.sched.changed(key) // a trial of its default config changes its answers
	return api.ImportResponse{Job: key.String(), Stored: stored, Skipped: skipped + len(trials) - stored}, nil
}

func (s *server) postReload(*http.Request) (any, error) {
	return s.reload(), nil
}

// parseProblem reads "1024,1024,1024" (x also separates).
func parseProblem(s string) ([]int, error) { return evaluate.ParseDims(s) }
