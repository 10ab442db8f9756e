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

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/tuner"
)

// job is one tunable (kernel spec, problem, device) and its run state.
type job struct {
	key   store.JobKey
	kern  *kernel
	spec  spec.Job
	entry cron.EntryID
	// foreign marks a stored job the kernel does not tune, made only to
	// list it (see server.listed); it is never scheduled.
	foreign bool

	// Guarded by scheduler.mu.
	running bool
	queued  *runRequest // a run asked for while one was in flight
	cancel  context.CancelFunc
	live    store.Cycle // the running cycle as of its last generation

	held        string           // why a pooled split gave it no evaluations (api.Job.Held); cleared when a cycle starts
	failures    int              // cycles failed in a row; 0 after one that did not fail
	retry       *time.Timer      // the retry of a failed cycle (retry.go); nil when none is due
	retryAt     time.Time        // when retry fires
	requestedBy *store.Requester // who asked, for a job a miss added
	// unsaved are ended cycles whose record the store refused (see
	// unsaved.go), oldest first.
	unsaved []store.Cycle
}

// kernel is a loaded spec and its jobs. A kernel is not changed once
// published in scheduler.kernels: a job added by a miss publishes a copy.
type kernel struct {
	spec *spec.Spec
	jobs []*job

	lastMiss time.Time // when a miss last added a job
	missJobs int       // jobs added by misses
}

// parseProblem reads a problem size of k, which must have as many dims
// as the kernel's problems (named by its spec, when it names them).
func (k *kernel) parseProblem(problem string) ([]int, error) {
	dims, err := parseProblem(problem)
	if err != nil {
		return nil, sockapi.Invalidf("problem %q: %v", problem, err)
	}
	want := len(k.spec.ProblemDims)
	if want == 0 && len(k.jobs) > 0 {
		want = strings.Count(k.jobs[0].key.Problem, ",") + 1
	}
	if want > 0 && len(dims) != want {
		named := ""
		if len(k.spec.ProblemDims) > 0 {
			named = " (" + strings.Join(k.spec.ProblemDims, ", ") + ")"
		}
		return nil, sockapi.Invalidf("problem %q: kernel %q has %d dims%s, got %d", problem, k.spec.Name, want, named, len(dims))
	}
	return dims, nil
}

// tune_on_miss limits: a kernel gains at most one job per missInterval and
// maxMissJobs in all, whatever runtimes ask for.
const (
	missInterval = 10 * time.Second
	maxMissJobs  = 32
)

type runRequest struct {
	trigger string
	budget  tuner.Budget // Why says how a pooled budget was split
	certify bool         // only (re)certify the job's best configs, measure nothing new
}

// scheduler owns the kernels, their cron entries and the running cycles.
type scheduler struct {
	metrics *metrics // nil in tests that need none
	dir     string
	st      *store.Store
	tn      *tuner.Tuner
	cron    *cron.Cron
	log     zerolog.Logger
	seed    uint64
	clock   func() time.Time
	// splitBudget splits a pipeline's pooled budget among jobs waiting
	// for their first cycle (server.splitBudget); nil pools nothing.
	splitBudget func(ctx context.Context, p *spec.Pipeline, jobs []*job) []jobShare

	// epoch is bumped whenever served configs or the kernels may have
	// changed, which invalidates cached config answers and wakes the
	// runtimes waiting for a change.
	epoch epoch
	// index holds what config lookups need; changed keeps it current.
	index lookupIndex
	// checks verifies nearest answers' configs at the problems asked for.
	checks nearestChecks

	onChange func(...store.JobKey) // told of every change; nil without a fleet
	// zoneChanged is told of every change too, so zoned pipelines are
	// tuned again at new served configs; nil without zoning.
	zoneChanged func(...store.JobKey)
	// deferStart says a job with nothing served waits for the fleet
	// instead of its first cycle; nil without a fleet. Called under mu.
	deferStart func(*job) bool

	flushMu    sync.Mutex         // one writer of kept cycle records at a time
	stopRetry  context.CancelFunc // ends retryUnsaved; set by start
	retryEvery time.Duration      // how often kept cycle records are retried (tests)
	retryMin   time.Duration      // first wait before a failed cycle runs again (retry.go); 0 is DefaultRetryMin

	mu       sync.Mutex
	ctx      context.Context // cycles run under it; set by start
	kernels  map[string]*kernel
	pipes    map[string]*spec.Pipeline // declared pipelines, by name (pipelines.go)
	jobs     map[string]*job
	draining map[string]*job // removed jobs whose cycle is still stopping
	specErrs []string
	wg       sync.WaitGroup
	opencl   *openclDevices // nil: opencl specs are refused
}

// load reads the kernel specs: the spec directory, or the builtin kernels
// when it is missing or holds no spec files; and the pipelines the
// directory declares. Bad files are reported and skipped; the others load.
func (s *scheduler) load() (map[string]*kernel, map[string]*spec.Pipeline, []string) {
	dir, errs := spec.Load(s.dir)
	specs := dir.Specs
	var msgs []string
	for _, err := range errs {
		s.log.Error().Err(err).Str("dir", s.dir).Msg("spec not loaded")
		msgs = append(msgs, err.Error())
	}
	if len(specs) == 0 && len(errs) == 0 {
		s.log.Info().Str("dir", s.dir).Msg("no kernel specs; tuning the builtin kernels")
		specs = spec.Builtins()
	}
	kernels := map[string]*kernel{}
	for _, sp := range specs {
		sp.HarnessLog = s.log.With().Str("kernel", sp.Name).Str("from", "harness stderr").Logger()
		if sp.Evaluator == "opencl" && s.opencl != nil {
			sp.OpenCLRun = s.opencl.run(context.Background())
		}
		jobs, err := sp.Jobs()
		if err != nil {
			s.log.Error().Err(err).Str("kernel", sp.Name).Msg("spec not loaded")
			msgs = append(msgs, err.Error())
			continue
		}
		if sp.Note != "" {
			// Listed and served its default, but not tuned: say why.
			s.log.Warn().Str("kernel", sp.Name).Str("note", sp.Note).Msg("kernel not tuned")
			msgs = append(msgs, sp.Source+": "+sp.Note)
		}
		k := &kernel{spec: sp}
		for _, j := range jobs {
			if j.DefaultNote != "" {
				s.log.Warn().Str("kernel", sp.Name).Str("problem", j.Problem.String()).Str("note", j.DefaultNote).Msg("default replaced")
			}
			device := "none"
			if j.Evaluator != nil {
				device = j.Evaluator.Device()
			}
			key := store.JobKey{Kernel: sp.Name, SpecHash: sp.Hash, Problem: j.Problem.String(), Device: device}
			k.jobs = append(k.jobs, &job{key: key, kern: k, spec: j})
		}
		if sp.TuneOnMiss {
			s.loadMissJobs(k)
		}
		if err := s.st.PutSpec(store.Spec{Name: sp.Name, Hash: sp.Hash, Source: sp.Source, Raw: sp.Raw, Loaded: s.clock()}); err != nil {
			s.log.Error().Err(err).Str("kernel", sp.Name).Msg("store spec")
		}
		kernels[sp.Name] = k
	}
	pipes, notes := s.loadPipelines(dir, kernels)
	withBuiltinPipeline(pipes, kernels)
	notes = append(notes, withExecPipelines(pipes, kernels)...)
	return kernels, pipes, append(msgs, notes...)
}

// loadMissJobs brings back the jobs earlier misses added to k: the stored
// jobs of the same spec version and device at problems the spec does not
// list.
func (s *scheduler) loadMissJobs(k *kernel) {
	keys, err := s.st.Jobs()
	if err != nil {
		s.log.Error().Err(err).Str("kernel", k.spec.Name).Msg("list jobs for tune_on_miss")
		return
	}
	for _, key := range keys {
		if key.Kernel != k.spec.Name || key.SpecHash != k.spec.Hash || len(k.jobs) == 0 || key.Device != k.jobs[0].key.Device ||
			slices.ContainsFunc(k.jobs, func(j *job) bool { return j.key == key }) || k.missJobs >= maxMissJobs {
			continue
		}
		dims, err := parseProblem(key.Problem)
		if err != nil {
			continue
		}
		sj, err := k.spec.JobFor(dims)
		if err != nil || sj.Evaluator == nil || sj.Evaluator.Device() != key.Device {
			continue
		}
		j := &job{key: key, kern: k, spec: sj}
		if r, ok, err := s.st.Requester(key); err != nil {
			s.log.Error().Err(err).Str("job_id", key.String()).Msg("tune_on_miss: who asked")
		} else if ok {
			j.requestedBy = &r
		}
		k.jobs = append(k.jobs, j)
		k.missJobs++
	}
}

// miss adds a job for a problem a runtime asked for and no job tunes, on
// the kernel's device class, and starts its first cycle, when the kernel's
// spec says tune_on_miss. Misses of one problem make one job; new jobs are
// rate-limited per kernel and bounded by the spec's on_miss; the job
// records who asked (by). It returns nil when the problem has a job (added
// now or before), else why it added none.
func (s *scheduler) miss(name string, dims []int, by store.Requester) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kernels[name]
	if k == nil || !k.spec.TuneOnMiss || len(k.jobs) == 0 || s.ctx == nil || s.ctx.Err() != nil {
		return errNotRunning
	}
	problem := evaluate.Problem{Dims: dims}.String()
	device := k.jobs[0].key.Device
	key := store.JobKey{Kernel: name, SpecHash: k.spec.Hash, Problem: problem, Device: device}
	if _, ok := s.jobs[key.String()]; ok {
		return nil
	}
	now := s.clock()
	if k.missJobs >= maxMissJobs {
		return fmt.Errorf("tune_on_miss added the most jobs it may (%d)", maxMissJobs)
	}
	if now.Sub(k.lastMiss) < missInterval {
		return fmt.Errorf("tune_on_miss adds at most one job every %s", missInterval)
	}
	if err := k.spec.CheckMiss(dims); err != nil {
		s.log.Debug().Err(err).Str("kernel", name).Uint32("uid", by.UID).Msg("tune_on_miss: refused")
		return err
	}
	sj, err := k.spec.JobFor(dims)
	if err == nil && (sj.Evaluator == nil || sj.Evaluator.Device() != device) {
		err = errors.New("not on the kernel's device class")
	}
	nk := &kernel{spec: k.spec, jobs: slices.Clone(k.jobs), lastMiss: now, missJobs: k.missJobs}
	s.kernels[name] = nk
	if err != nil {
		s.log.Warn().Err(err).Str("kernel", name).Str("problem", problem).Msg("tune_on_miss: cannot tune this problem")
		return err
	}
	by = named(by)
	j := &job{key: key, kern: nk, spec: sj, requestedBy: &by}
	if err := s.st.SetRequester(key, by); err != nil {
		s.log.Error().Err(err).Str("job_id", key.String()).Msg("tune_on_miss: record who asked")
	}
	nk.jobs = append(nk.jobs, j)
	nk.missJobs++
	s.jobs[key.String()] = j
	if entry, err := s.cron.AddFunc(k.spec.Schedule, func() { s.trigger(key.String(), runRequest{trigger: "cron"}) }); err == nil {
		j.entry = entry
	}
	s.log.Info().Str("job_id", key.String()).Str("requested_by", requesterString(&by)).Msg("tune_on_miss: new job for a problem a runtime asked for")
	s.startLocked(j, runRequest{trigger: "miss"})
	s.epoch.Add(1)
	return nil
}

// apply replaces the loaded kernels: jobs that disappeared (or whose spec
// changed, which changes their key) lose their cron entry and have their
// cycle cancelled; new jobs get an entry, and a first cycle right away when
// nothing is served for them yet.
func (s *scheduler) apply(kernels map[string]*kernel, pipes map[string]*spec.Pipeline, errs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining == nil {
		s.draining = map[string]*job{}
	}
	// The evaluators just made, before kept jobs replace theirs.
	var fresh []evaluate.Evaluator
	for _, k := range kernels {
		for _, j := range k.jobs {
			fresh = append(fresh, j.spec.Evaluator)
		}
	}
	next := map[string]*job{}
	for _, k := range kernels {
		for i, j := range k.jobs {
			id := j.key.String()
			if old, ok := s.jobs[id]; ok {
				// Same key, same spec version: keep the job and its run state.
				old.kern = k
				k.jobs[i] = old
				j = old
			} else if old, ok := s.draining[id]; ok {
				// Removed while its cycle ran, and back: one job, so a new
				// cycle queues behind the cancelled one.
				delete(s.draining, id)
				old.kern = k
				k.jobs[i] = old
				j = old
			}
			next[id] = j
		}
	}
	for id, old := range s.jobs {
		if _, ok := next[id]; ok {
			continue
		}
		if old.entry != 0 {
			s.cron.Remove(old.entry)
		}
		old.entry, old.queued = 0, nil
		old.stopRetry()
		if old.running {
			old.cancel()
			s.draining[id] = old
		}
		s.log.Info().Str("job_id", id).Msg("job removed")
	}
	s.closeUnused(fresh, s.jobs, next)
	s.kernels, s.pipes, s.jobs, s.specErrs = kernels, pipes, next, errs
	s.index.retain(next, kernels)
	s.epoch.Add(1)
	var stored map[string][]store.JobKey  // for deviceChanged
	pooled := map[*spec.Pipeline][]*job{} // first cycles that share a pipeline's budget (budget.go)
	for id, j := range next {
		if j.entry != 0 || j.spec.Evaluator == nil {
			continue
		}
		jj := j
		entry, err := s.cron.AddFunc(j.kern.spec.Schedule, func() { s.trigger(jj.key.String(), runRequest{trigger: "cron"}) }) // an error means the job went away: nothing to do
		if err != nil {
			s.log.Error().Err(err).Str("job_id", id).Str("schedule", j.kern.spec.Schedule).Msg("job not scheduled")
			continue
		}
		j.entry = entry
		if s.needsStart(j) && (s.deferStart == nil || !s.deferStart(j)) {
			trigger := "start"
			if from := s.deviceChanged(j, &stored); from != "" {
				// A new driver or device: the job is new, its first cycle
				// warm-starts from what the old device class measured.
				trigger = "device-change"
				s.log.Info().Str("job_id", id).Str("from_device", from).Msg("device class changed; re-tuning")
			}
			if trigger == "start" && s.pool(j, pooled) {
				continue
			}
			s.startLocked(j, runRequest{trigger: trigger})
		}
	}
	s.startPooled(pooled)
}

// deviceChanged names another device class that serves the same kernel
// spec at the same problem when j has nothing served yet: the device or
// its driver changed. Empty when there is none. jobs holds the stored
// jobs by kernel|spec hash|problem, listed on first need (once per apply:
// listing them for each new job made a start quadratic in jobs).
func (s *scheduler) deviceChanged(j *job, jobs *map[string][]store.JobKey) string {
	if _, served, err := s.st.Served(j.key); err != nil || served {
		return ""
	}
	same := func(k store.JobKey) string { return k.Kernel + "|" + k.SpecHash + "|" + k.Problem }
	if *jobs == nil {
		keys, err := s.st.Jobs()
		if err != nil {
			return ""
		}
		*jobs = map[string][]store.JobKey{}
		for _, k := range keys {
			(*jobs)[same(k)] = append((*jobs)[same(k)], k)
		}
	}
	for _, k := range (*jobs)[same(j.key)] {
		if k.Device != j.key.Device {
			if _, served, err := s.st.Served(k); err == nil && served {
				return k.Device
			}
		}
	}
	return ""
}

// closeUnused closes the evaluators (exec harnesses are processes) of the
// freshly loaded kernels and of the old jobs that no job in next or
// draining uses any more. Called with s.mu held.
func (s *scheduler) closeUnused(fresh []evaluate.Evaluator, old, next map[string]*job) {
	inUse := map[evaluate.Evaluator]bool{}
	for _, j := range next {
		inUse[j.spec.Evaluator] = true
	}
	for _, j := range s.draining {
		inUse[j.spec.Evaluator] = true
	}
	closed := map[evaluate.Evaluator]bool{}
	closeEv := func(ev evaluate.Evaluator) {
		if c, ok := ev.(io.Closer); ok && ev != nil && !inUse[ev] && !closed[ev] {
			closed[ev] = true
			c.Close()
		}
	}
	for _, ev := range fresh {
		closeEv(ev)
	}
	for _, j := range old {
		closeEv(j.spec.Evaluator)
	}
}

// needsStart reports whether a job gets a cycle right away: nothing is
// served for it yet, or its last cycle was interrupted by a shutdown or
// crash, or failed.
func (s *scheduler) needsStart(j *job) bool {
	if _, served, err := s.st.Served(j.key); err != nil || !served {
		return true
	}
	last, ok, err := s.st.LastCycle(j.key, false)
	if err != nil || !ok {
		return false
	}
	// A failed cycle is tried again at start: the restart may be the fix.
	return last.State == tuner.Unfinished || last.State == "running" || last.State == "failed"
}

// closeLeftRunning marks j's newest cycle interrupted when the store still
// says it runs (a crash left it so) and this start does not resume it, so
// that cycles does not show it running while nothing runs; its next cycle
// resumes it. Called with s.mu held, for a job not running.
func (s *scheduler) closeLeftRunning(j *job) {
	last, ok, err := s.st.LastCycle(j.key, false)
	if err != nil || !ok || (last.State != "running" && last.State != "waiting") {
		return
	}
	last.State = tuner.Unfinished
	if err := s.st.PutCycle(j.key, last); err != nil {
		s.log.Warn().Err(err).Str("job_id", j.key.String()).Int("cycle", last.ID).Msg("could not mark a cycle left running as interrupted")
		return
	}
	s.log.Info().Str("job_id", j.key.String()).Int("cycle", last.ID).Msg("cycle left running by an earlier run marked interrupted; the job's next cycle resumes it")
}

// Errors of trigger.
var (
	errNoJob    = errors.New("no such job")
	errStopping = errors.New("the daemon is shutting down")
)

// trigger starts a cycle of a job now, or queues one behind the cycle in
// flight.
func (s *scheduler) trigger(id string, req runRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok || j.spec.Evaluator == nil {
		return errNoJob
	}
	if !s.startLocked(j, req) {
		return errStopping
	}
	return nil
}

// startLocked starts or queues a cycle; false once the daemon is stopping.
func (s *scheduler) startLocked(j *job, req runRequest) bool {
	if s.ctx == nil || s.ctx.Err() != nil {
		return false
	}
	if j.running {
		r := req
		j.queued = &r
		return true
	}
	if !req.certify && req.budget.Evals <= 0 && req.budget.Seconds <= 0 {
		req.budget = tuner.Budget{Evals: j.kern.spec.Budget.Evals, Seconds: j.kern.spec.Budget.Seconds}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j.running, j.cancel, j.held = true, cancel, ""
	j.stopRetry()
	s.wg.Go(func() {
		defer cancel()
		s.run(ctx, j, req)
	})
	return true
}

// tunerJob is what the tuner is given of job key, sj of spec sp.
func tunerJob(sp *spec.Spec, key store.JobKey, sj spec.Job) tuner.Job {
	sv := sp.Verify
	obj, _ := evaluate.ParseObjective(sp.Objective) // checked when the spec was parsed
	kernel := ""
	switch ev := sj.Evaluator.(type) {
	case *replay.Recording:
		kernel = ev.Kernel
	default:
		if sp.OpenCL != nil {
			kernel = sp.OpenCL.Kernel
		}
	}
	return tuner.Job{
		Kernel: kernel, SourceSHA256: sp.SourceSHA256(),
		Objective: obj,
		Key:       key, Problem: sj.Problem, Evaluator: sj.Evaluator, Space: sj.Space, Default: sj.Default,
		Verify: evaluate.VerifySettings{Tolerance: sv.Tolerance, Value: sv.Value, Repeats: sv.Repeats, Nondeterministic: sv.Nondeterministic,
			Inputs: sv.Inputs, Budget: sv.ErrorBudget.Settings()},
	}
}

func (s *scheduler) run(ctx context.Context, j *job, req runRequest) {
	tj := tunerJob(j.kern.spec, j.key, j.spec)
	if req.certify {
		res, err := s.tn.Certify(ctx, tj, 0)
		if err != nil {
			s.log.Error().Err(err).Str("job_id", j.key.String()).Msg("re-verification failed")
		} else {
			s.log.Info().Str("job_id", j.key.String()).Str("served", res.Served).Str("cert", res.Cert).Msg("re-verified")
		}
		s.finished(j)
		return
	}
	// Records kept from a full disk go first, or this cycle would resume
	// one that ended; while the store refuses them, the cycle fails.
	if err := s.flush(j); err != nil {
		err = fmt.Errorf("%w: %w", tuner.ErrStore, err)
		s.settle(j, s.notOpened(req, err))
		if s.metrics != nil {
			s.metrics.cycleEnded(j.key.Kernel, "failed")
		}
		s.log.Error().Err(err).Str("job_id", j.key.String()).Msg("cycle failed")
		s.ended(j, "failed")
		s.finished(j)
		return
	}
	cy, err := s.tn.Cycle(ctx, tj, req.budget, req.trigger, s.seed, func(c store.Cycle) {
		s.mu.Lock()
		j.live = c
		s.mu.Unlock()
	})
	if err != nil && cy.State == "" {
		cy = s.notOpened(req, err)
	}
	if cy.State != "" {
		s.settle(j, cy)
	}
	if s.metrics != nil && cy.State != "" {
		s.metrics.cycleEnded(j.key.Kernel, cy.State)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		s.log.Info().Str("job_id", j.key.String()).Int("cycle", cy.ID).Msg("cycle cancelled; the next start resumes it")
	case errors.Is(err, tuner.ErrBusy):
		s.log.Warn().Str("job_id", j.key.String()).Int("cycle", cy.ID).Str("state", cy.State).Str("busy", cy.Busy).Msg("device busy with other work; cycle given up")
	default:
		s.log.Error().Err(err).Str("job_id", j.key.String()).Int("cycle", cy.ID).Msg("cycle failed")
	}
	if !errors.Is(err, context.Canceled) {
		s.ended(j, cy.State)
	}
	s.finished(j)
}

// finished marks a job's run over and starts what was queued behind it.
func (s *scheduler) finished(j *job) {
	s.changed(j.key) // the run may have promoted a config
	s.mu.Lock()
	defer s.mu.Unlock()
	j.running, j.cancel, j.live = false, nil, store.Cycle{}
	if s.draining[j.key.String()] == j {
		delete(s.draining, j.key.String())
	}
	if q := j.queued; q != nil {
		j.queued = nil
		s.startLocked(j, *q)
	}
}

// changed says that what jobs serve may have changed (a promotion, a
// revocation, a stale mark, new trials): the lookup index drops what it
// holds of them, and runtimes waiting for a change wake.
func (s *scheduler) changed(jobs ...store.JobKey) {
	s.index.invalidate(jobs...)
	s.checks.forget(jobs...)
	s.epoch.Add(1)
	if s.zoneChanged != nil {
		s.zoneChanged(jobs...)
	}
	if s.onChange != nil {
		s.onChange(jobs...)
	}
}

// snapshot returns the kernels sorted by name and the spec errors.
func (s *scheduler) snapshot() ([]*kernel, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := make([]*kernel, 0, len(s.kernels))
	for _, k := range s.kernels {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b *kernel) int {
		switch {
		case a.spec.Name < b.spec.Name:
			return -1
		case a.spec.Name > b.spec.Name:
			return 1
		}
		return 0
	})
	return ks, slices.Clone(s.specErrs)
}

func (s *scheduler) kernel(name string) (*kernel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.kernels[name]
	return k, ok
}

// jobView is a job's run state at one moment.
type jobView struct {
	running bool
	live    store.Cycle
	entry   cron.EntryID // its cron entry; nextRuns says when it runs
	held    string
}

func (s *scheduler) view(j *job) jobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return jobView{running: j.running, live: j.live, entry: j.entry, held: j.held}
}

// exactState is the verification state of a nearest answer given while
// j, the kernel's own job at the problem asked for, serves nothing yet:
// tuning while a cycle of it runs, else waiting for its next cycle, with
// when that is.
func (s *scheduler) exactState(j *job) string {
	v := s.view(j)
	if v.running {
		return api.VerifyTuning
	}
	next, ok := s.nextRuns()[v.entry]
	if !ok || next.IsZero() {
		return api.VerifyWaiting + "its job has no cycle running or scheduled; quasimctl tune starts one"
	}
	return api.VerifyWaiting + "its job's next cycle is at " + next.UTC().Format(time.RFC3339) + " (its schedule); quasimctl tune starts one now"
}

// nextRuns returns when each cron entry runs next, from one snapshot of
// them: cron.Entry copies them all for each job it is asked about.
func (s *scheduler) nextRuns() map[cron.EntryID]time.Time {
	entries := s.cron.Entries()
	out := make(map[cron.EntryID]time.Time, len(entries))
	for _, e := range entries {
		out[e.ID] = e.Next
	}
	return out
}

// runningJobs lists the jobs with a cycle in flight: those measuring, and
// those waiting for an idle device.
func (s *scheduler) runningJobs() (running, waiting []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, j := range s.jobs {
		switch {
		case !j.running:
		case j.live.State == "waiting":
			waiting = append(waiting, id)
		default:
			running = append(running, id)
		}
	}
	slices.Sort(running)
	slices.Sort(waiting)
	return running, waiting
}

// start lets cycles run under ctx, runs load (the first load of the
// specs), then starts cron: entries added before cron runs are appended,
// while each one added to a running cron re-sorts all of them, which made
// a start with 100,000 jobs quadratic.
func (s *scheduler) start(ctx context.Context, load func()) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	load()
	s.cron.Start()
	rctx, cancel := context.WithCancel(ctx)
	s.stopRetry = cancel
	s.wg.Go(func() { s.retryUnsaved(rctx) })
}

// stop stops cron, cancels running cycles (they checkpoint and stay
// interrupted) and waits for them up to timeout.
func (s *scheduler) stop(deadline time.Time) error {
	<-s.cron.Stop().Done()
	if s.stopRetry != nil {
		s.stopRetry()
	}
	s.mu.Lock()
	for _, j := range s.jobs {
		j.queued = nil
		if j.cancel != nil {
			j.cancel()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		err = errors.New("cycles still running at the shutdown deadline")
	}
	s.mu.Lock()
	all := map[string]*job{}
	for id, j := range s.jobs {
		all[id] = j
	}
	for id, j := range s.draining {
		all[id] = j
	}
	s.jobs, s.draining = nil, nil
	s.closeUnused(nil, all, nil)
	s.mu.Unlock()
	return err
}
