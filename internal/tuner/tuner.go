package tuner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/introspect"
)

// Job is what a cycle tunes: one kernel spec version at one problem size on
// one device.
type Job struct {
	Key       store.JobKey
	Verify    evaluate.VerifySettings
	Problem   evaluate.Problem
	Evaluator evaluate.Evaluator
	Space     *genome.Space
	Default   genome.Config
	// Objective is what the search minimises (zero: time).
	Objective evaluate.Objective
	// Kernel is the kernel function's own name where the evaluator knows
	// it (an OpenCL __kernel, a recording's kernel_name), and SourceSHA256
	// identifies the source of a kernel tuned from source: both match
	// prior packs.
	Kernel       string
	SourceSHA256 string
}

// value is the job's objective of a run; false when the objective needs
// an energy reading the run lacks.
func (j Job) value(timeMS, energyMJ float64) (float64, bool) {
	v, err := j.Objective.Value(timeMS, energyMJ)
	return v, err == nil
}

// result is what a stored trial of config c tells a strategy; false for a
// valid run without the energy reading the objective needs, which teaches
// nothing.
func (j Job) result(c genome.Config, tr store.Trial) (evolve.Result, bool) {
	ok := tr.Status == string(evaluate.StatusOK)
	v, has := j.value(tr.TimeMS, tr.EnergyMJ)
	return evolve.Result{Config: c, OK: ok, Value: v}, has || !ok
}

// Budget bounds a cycle; zero fields are no limit, but one must be set.
type Budget struct {
	Evals   int
	Seconds float64
	// Why says how the budget was decided when not by the spec alone
	// (a pipeline's budget split by influence); the cycle record keeps it.
	Why string
}

// Config wires a Tuner.
type Config struct {
	Store *store.Store
	// NewStrategy makes a job's search strategy; its state is the policy.
	NewStrategy func(space *genome.Space, seed uint64) evolve.Strategy
	// Lock takes the exclusive lock of a device; the returned func unlocks.
	Lock func(ctx context.Context, device string) (func(), error)
	// CPU is the device class of the CPU the tuner runs on: a strategy's
	// Ask and Tell hold its lock, so that no job's search computes beside
	// a measurement on the CPU (11 jobs' models beside the two busy loops
	// of examples/served-times made each CPU time swing by up to 2x, and the
	// search's best the luckiest of them). "" holds no lock.
	CPU string
	// Generation is the number of configs measured between checkpoints (default 4).
	Generation int
	// Signer signs certificates; nil leaves promotion impossible.
	Signer ed25519.PrivateKey
	// Details describe the device behind a device class, for certificates.
	Details map[string]string
	// Candidates is how many of the best configs a certification verifies
	// before it gives up and serves the default (default 64).
	Candidates int
	// Finalists is how many of a job's best configs a certification
	// measures again, each once in ConfirmRounds fresh processes, before
	// it verifies them, where the evaluator measures in processes of its
	// own (evaluate.Refresher) and the objective is time: they are then
	// verified in order of their median times (defaults
	// evaluate.DefaultFinalists and DefaultConfirmRounds; negative: never).
	Finalists     int
	ConfirmRounds int
	// LatencyRounds is how many rounds a certification measures a config
	// that passed its checks in, as the search measures, each beside the
	// job's default (default DefaultLatencyRounds): its latency and its
	// speed-up over the default come from them.
	LatencyRounds int
	// Measured, when set, is told of every trial a cycle measures and the
	// wall time the measurement took (for metrics).
	Measured func(job Job, tr evaluate.Trial, took time.Duration)
	// Priors, when set, gives the sources of a prior pack that match a
	// new job, for its warm start: trusted before the store's trials.
	Priors func(job Job) []evolve.Source
	// Related, when set, gives trials of related jobs from outside the
	// store (other nodes of a fleet), by source name, for a new job's
	// warm start: trusted after the store's.
	Related func(job Job) map[string][]store.Trial
	// Busy, when set, says what other work is using a device too much to
	// tune on it now; empty means the device is idle enough. A cycle asks
	// before it starts and before each generation, and waits while it is
	// busy.
	Busy func(device string) string
	// IdleWait is how long in all a cycle waits for an idle device; past
	// it a cycle that measured nothing yet is skipped, and one that did is
	// left interrupted for its next start to resume. Zero skips at once.
	IdleWait time.Duration
	// IdlePoll is how often a waiting cycle asks Busy again (default 5s).
	IdlePoll time.Duration
	// Meter, when set, gives the meter of a device (nil: none): each
	// measurement is metered for energy and throttling.
	Meter func(device string) introspect.Meter
	// Remeasure is how many times a measurement taken while the device
	// throttled (thermal or power) is thrown away and taken again, after
	// Cooldown (defaults 2 and 2s; negative Remeasure: never); the last
	// one is kept and marked.
	Remeasure int
	Cooldown  time.Duration
	// Knobs, when set, applies the device settings a config tunes (power
	// limit, clocks) before it is measured or verified, and returns what
	// restores them after; an evaluator that replays recordings is never
	// given to it. It errs when it cannot (no privilege): the cycle fails.
	Knobs func(device string, cfg map[string]any) (restore func() error, err error)
	Log   zerolog.Logger
	Now   func() time.Time
}

// Tuner runs cycles. It is safe for concurrent use on different jobs.
type Tuner struct {
	cfg Config
}

// New returns a Tuner; it panics on a missing dependency.
func New(cfg Config) *Tuner {
	if cfg.Store == nil {
		panic("tuner: nil Store")
	}
	if cfg.NewStrategy == nil {
		panic("tuner: nil NewStrategy")
	}
	if cfg.Lock == nil {
		var mu sync.Mutex
		cfg.Lock = func(context.Context, string) (func(), error) { mu.Lock(); return mu.Unlock, nil }
	}
	if cfg.Generation <= 0 {
		cfg.Generation = 4
	}
	if cfg.Candidates <= 0 {
		cfg.Candidates = 64
	}
	if cfg.Finalists == 0 {
		cfg.Finalists = evaluate.DefaultFinalists
	}
	if cfg.ConfirmRounds <= 0 {
		cfg.ConfirmRounds = evaluate.DefaultConfirmRounds
	}
	if cfg.LatencyRounds <= 0 {
		cfg.LatencyRounds = DefaultLatencyRounds
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Remeasure == 0 {
		cfg.Remeasure = 2
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = 2 * time.Second
	}
	if cfg.IdlePoll <= 0 {
		cfg.IdlePoll = 5 * time.Second
	}
	return &Tuner{cfg: cfg}
}

// Unfinished is the state of a cycle that stopped before its budget was
// spent (shutdown or crash); the next cycle of the job resumes it.
const Unfinished = "interrupted"

// ErrBusy is returned by a cycle that gave up waiting for its device to be
// idle of other work; the cycle record says what was using it.
var ErrBusy = errors.New("device busy with other work")

// ErrStore is returned by a cycle that failed because the store did not
// take a write (a full disk): the returned cycle is failed, and its record
// may not be on disk (the caller can write it once the store takes
// writes again).
var ErrStore = errors.New("state file not written")

// notWritten marks err, of a write the store refused, as ErrStore. A
// record the store finds invalid or corrupt is no refused write (writing
// it later would not help): that error stays as it is.
func notWritten(err error) error {
	if errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrStore, err)
}

// Cycle tunes job until the budget is spent or ctx is done. An interrupted
// earlier cycle of the job is resumed with its remaining budget instead of
// starting a new one. A cancelled cycle checkpoints what it measured, is
// left "interrupted" and returns ctx's error. A write the store refuses
// fails the cycle at once (ErrStore): the returned cycle says so, with ID 0
// when the store could not even create its record.
func (t *Tuner) Cycle(ctx context.Context, job Job, budget Budget, trigger string, seed uint64, progress func(store.Cycle)) (store.Cycle, error) {
	if budget.Evals <= 0 && budget.Seconds <= 0 {
		return store.Cycle{}, errors.New("cycle budget: no evaluations and no seconds")
	}
	st := t.cfg.Store
	log := t.cfg.Log.With().Str("job_id", job.Key.String()).Logger()
	strat, told, err := t.resume(ctx, job, seed, log)
	if err != nil {
		return store.Cycle{}, err
	}
	cy, resumed, err := t.openCycle(job, budget, trigger, strat.Name())
	if err != nil {
		return t.fail(job, cy, err)
	}
	if resumed {
		// The interrupted cycle keeps the budget it was started with.
		budget = Budget{Evals: cy.Budget, Seconds: cy.BudgetS, Why: cy.Budgeted}
	}
	log = log.With().Int("cycle", cy.ID).Logger()
	// The cycle's allocation counts from here; a resumed cycle keeps what
	// it had.
	alloc, _ := strat.(evolve.Allocator)
	var base map[string]int
	if alloc != nil {
		base = subtract(alloc.Allocation(), cy.Allocation)
	}
	log.Info().Str("trigger", cy.Trigger).Int("budget", cy.Budget).Int("evals", cy.Evals).Msg("cycle started")
	// A resumed cycle keeps its evaluation count, so the evaluation budget
	// spans the restart; the seconds budget counts from this start.
	start := t.cfg.Now()
	measureS := 0.0          // seconds spent measuring in this run of the cycle
	var waited time.Duration // waiting for an idle device in this run (real time)
	var idle time.Duration   // the same by the tuner's clock, for the seconds budget
	best := math.Inf(1)      // objective of cy.BestKey in this run
	done := func() bool {
		if budget.Evals > 0 && cy.Evals >= budget.Evals {
			return true
		}
		// Time spent waiting for an idle device is not tuning time.
		return budget.Seconds > 0 && (t.cfg.Now().Sub(start)-idle).Seconds() >= budget.Seconds
	}
	// The default config is measured first, so there is always a valid
	// baseline to compare and serve.
	var first []genome.Config
	if job.Default != nil && job.Space.Valid(job.Default) && !told[job.Space.Key(job.Default)] {
		first = append(first, job.Default)
	}
	for !done() {
		w0 := t.cfg.Now()
		if err := t.waitIdle(ctx, job, &cy, &waited, progress, log); err != nil {
			if errors.Is(err, ErrStore) && cy.State != Unfinished && cy.State != "skipped" {
				return t.fail(job, cy, err)
			}
			return cy, err
		}
		idle += t.cfg.Now().Sub(w0)
		n := t.cfg.Generation
		if budget.Evals > 0 {
			n = min(n, budget.Evals-cy.Evals)
		}
		// The default goes alone, so the strategy knows it before it asks.
		cfgs := first
		first = nil
		if len(cfgs) == 0 {
			var err error
			if err := t.computing(ctx, func() error { cfgs, err = strat.Ask(n); return err }); err != nil {
				if ctx.Err() != nil {
					return cy, ctx.Err()
				}
				return t.fail(job, cy, fmt.Errorf("%s ask: %w", strat.Name(), err))
			}
		}
		if len(cfgs) == 0 {
			log.Info().Msg("space exhausted")
			break
		}
		var trials []store.Trial
		var results []evolve.Result
		var evalErr error
		if pf, ok := job.Evaluator.(evaluate.Prefetcher); ok && len(cfgs) > 1 {
			pf.Prefetch(cfgs, job.Problem) // the first too: compile helpers build a generation side by side
		}
		for _, c := range cfgs {
			tr, err := t.measure(ctx, job, c)
			if err != nil {
				evalErr = err
				break
			}
			trials = append(trials, storeTrial(tr, cy.ID))
			measureS += tr.Cost
			told[tr.Key] = true
			cy.Evals++
			v, ok := job.value(tr.Time, tr.EnergyMJ)
			if tr.OK() && !ok {
				evalErr = fmt.Errorf("objective %s needs energy, and device %s gave no energy reading for %s (see quasimctl devices)", job.Objective, job.Key.Device, tr.Key)
				break
			}
			results = append(results, evolve.Result{Config: c, OK: tr.OK(), Value: v})
			if tr.OK() && (cy.BestKey == "" || v < best) {
				cy.BestKey, cy.BestMS, best = tr.Key, tr.Time, v
				if racer, ok := job.Evaluator.(evaluate.Racer); ok && job.Objective.String() == "time" {
					racer.Race(job.Problem, cy.BestMS)
				}
			}
			log.Debug().Str("config", tr.Key).Str("status", string(tr.Status)).Float64("time_ms", tr.Time).Msg("measured")
		}
		if evalErr == nil {
			if err := t.computing(ctx, func() error { return strat.Tell(results) }); err != nil {
				if ctx.Err() == nil {
					return t.fail(job, cy, fmt.Errorf("%s tell: %w", strat.Name(), err))
				}
				evalErr = err // stopped waiting for the CPU: kept as an interrupted generation
			}
		}
		if evalErr != nil {
			// A partial generation keeps its trials but not the policy: the
			// strategy still holds the unmeasured rest as asked, and would
			// never propose them again. The next cycle resumes from the
			// previous policy and re-learns these trials from the store.
			if err := t.cfg.Store.Checkpoint(job.Key, trials, nil, nil); err != nil {
				return t.fail(job, cy, notWritten(err))
			}
			if ctx.Err() != nil {
				cy.State = Unfinished
				if err := st.PutCycle(job.Key, cy); err != nil {
					return cy, err
				}
				log.Info().Int("evals", cy.Evals).Msg("cycle interrupted")
				return cy, ctx.Err()
			}
			return t.fail(job, cy, evalErr)
		}
		if alloc != nil {
			cy.Allocation = subtract(alloc.Allocation(), base)
		}
		if err := t.checkpoint(job, trials, strat, &cy); err != nil {
			return t.fail(job, cy, err)
		}
		if progress != nil {
			progress(cy)
		}
		if ctx.Err() != nil {
			cy.State = Unfinished
			if err := st.PutCycle(job.Key, cy); err != nil {
				return cy, err
			}
			return cy, ctx.Err()
		}
	}
	return t.finish(ctx, job, cy, measureS, log)
}

// computing runs a strategy's fn under the CPU's lock (Config.CPU). A
// lock that cannot be taken (its file cannot be opened) leaves fn to run
// without it: the cycle's measurements then fail on the same lock, and
// the cycle is failed with their error, as without this lock.
func (t *Tuner) computing(ctx context.Context, fn func() error) error {
	if t.cfg.CPU == "" {
		return fn()
	}
	unlock, err := t.cfg.Lock(ctx, t.cfg.CPU)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fn()
	}
	defer unlock()
	return fn()
}

// resume builds the job's strategy from its stored policy, and tells it
// every stored trial the policy does not hold (imports, or a policy that
// could not be restored).
func (t *Tuner) resume(ctx context.Context, job Job, seed uint64, log zerolog.Logger) (evolve.Strategy, map[string]bool, error) {
	st := t.cfg.Store
	strat := t.cfg.NewStrategy(job.Space, seed)
	policy, ok, err := st.Policy(job.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("load policy: %w", err)
	}
	if ok {
		if err := strat.UnmarshalBinary(policy); err != nil {
			log.Warn().Err(err).Msg("policy not restored; starting a fresh search from the stored trials")
			strat = t.cfg.NewStrategy(job.Space, seed)
		}
	}
	trials, err := st.Trials(job.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("load trials: %w", err)
	}
	if !ok && len(trials) == 0 {
		if err := t.warmStart(job, strat, log); err != nil {
			return nil, nil, err
		}
	}
	told := make(map[string]bool, len(trials))
	var results []evolve.Result
	for _, tr := range trials {
		told[tr.Key] = true
		c, err := job.Space.ParseKey(tr.Key)
		if err != nil {
			continue // a trial from outside the current space (an import) teaches nothing here
		}
		if r, ok := job.result(c, tr); ok {
			results = append(results, r)
		}
	}
	// Strategies ignore results they already hold, so this only adds what
	// the policy lacks.
	if err := t.computing(ctx, func() error { return strat.Tell(results) }); err != nil {
		return nil, nil, fmt.Errorf("replay trials: %w", err)
	}
	return strat, told, nil
}

// warmStart gives a new job's strategy, when it takes one, the ranking of
// its configs by what is known of its kernel, from the most trusted tier
// that knows anything: a prior pack (Config.Priors), then the store's
// trials of related jobs (the same kernel on other devices, at other
// problem sizes or of other spec versions, imports included), then the
// fleet's (Config.Related). Trials whose keys are not valid configs of this
// job's space are skipped. The store keeps which prior it was.
func (t *Tuner) warmStart(job Job, strat evolve.Strategy, log zerolog.Logger) error {
	ws, ok := strat.(evolve.WarmStarter)
	if !ok {
		return nil
	}
	from, srcs, err := t.priorSources(job)
	if err != nil || len(srcs) == 0 {
		return err
	}
	prior := evolve.RankTransfer(job.Space, srcs)
	ws.WarmStart(prior)
	names := make([]string, len(srcs))
	n := 0
	for i, s := range srcs {
		names[i] = s.Name
		n += len(s.Results)
	}
	log.Info().Str("tier", from).Strs("sources", names).Int("trials", n).Int("ranked", len(prior)).Msg("warm start")
	// What it started from is for operators; failing to keep it (a
	// damaged job record) must not fail the cycle.
	p := store.Prior{From: from, Sources: names, Ranked: len(prior), At: t.cfg.Now()}
	if err := t.cfg.Store.SetPrior(job.Key, p); err != nil {
		log.Warn().Err(err).Msg("warm start not recorded")
	}
	return nil
}

// Tiers of warm-start priors, most trusted first.
const (
	PriorPack  = "pack"
	PriorStore = "store"
	PriorFleet = "fleet"
)

// priorSources returns the most trusted tier's sources for job.
func (t *Tuner) priorSources(job Job) (string, []evolve.Source, error) {
	if t.cfg.Priors != nil {
		if srcs := t.cfg.Priors(job); len(srcs) > 0 {
			return PriorPack, srcs, nil
		}
	}
	var srcs []evolve.Source
	add := func(name string, trials []store.Trial) {
		src := evolve.Source{Name: name}
		for _, tr := range trials {
			c, err := job.Space.ParseKey(tr.Key)
			if err != nil || !job.Space.Valid(c) {
				continue
			}
			if r, ok := job.result(c, tr); ok {
				src.Results = append(src.Results, r)
			}
		}
		if len(src.Results) > 0 {
			srcs = append(srcs, src)
		}
	}
	st := t.cfg.Store
	keys, err := st.Jobs()
	if err != nil {
		return "", nil, fmt.Errorf("warm start: %w", err)
	}
	for _, k := range keys {
		if k == job.Key || k.Kernel != job.Key.Kernel {
			continue
		}
		trials, err := st.Trials(k)
		if err != nil {
			return "", nil, fmt.Errorf("warm start from %s: %w", k, err)
		}
		add(k.String(), trials)
	}
	if len(srcs) > 0 {
		return PriorStore, srcs, nil
	}
	if t.cfg.Related != nil {
		related := t.cfg.Related(job)
		for _, name := range slices.Sorted(maps.Keys(related)) {
			add(name, related[name])
		}
	}
	return PriorFleet, srcs, nil
}

// subtract returns a − b per name, without the names left at zero.
func subtract(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// openCycle resumes the job's interrupted cycle or starts a new one. On an
// error it returns the cycle it meant to run, with ID 0 when it is new.
func (t *Tuner) openCycle(job Job, budget Budget, trigger, strategy string) (store.Cycle, bool, error) {
	st := t.cfg.Store
	cy := store.Cycle{
		Trigger:  trigger,
		State:    "running",
		Started:  t.cfg.Now(),
		Budget:   budget.Evals,
		BudgetS:  budget.Seconds,
		Budgeted: budget.Why,
		Strategy: strategy,
	}
	cycles, err := st.Cycles(job.Key)
	if err != nil {
		return cy, false, fmt.Errorf("load cycles: %w", err)
	}
	if n := len(cycles); n > 0 {
		last := cycles[n-1]
		if last.State == Unfinished || last.State == "running" || last.State == "waiting" {
			last.State = "running"
			if err := st.PutCycle(job.Key, last); err != nil {
				return last, true, notWritten(err)
			}
			return last, true, nil
		}
	}
	stored, err := st.NewCycle(job.Key, cy)
	if err != nil {
		return cy, false, notWritten(err)
	}
	return stored, false, nil
}

// applyKnobs sets the device settings of config c, when the tuner has
// Knobs and the job measures for real; the returned func restores them.
func (t *Tuner) applyKnobs(job Job, c genome.Config) (func(), error) {
	if t.cfg.Knobs == nil {
		return func() {}, nil
	}
	if r, ok := job.Evaluator.(evaluate.Replayer); ok && r.Replays() {
		return func() {}, nil
	}
	restore, err := t.cfg.Knobs(job.Key.Device, job.Space.ConfigMap(c))
	if err != nil {
		return nil, fmt.Errorf("device settings of %s: %w", job.Space.Key(c), err)
	}
	return func() {
		if err := restore(); err != nil {
			t.cfg.Log.Error().Err(err).Str("job_id", job.Key.String()).Str("config", job.Space.Key(c)).Msg("device settings not restored")
		}
	}, nil
}

// waitIdle returns once job's device is idle of other work. While it is
// busy the cycle is "waiting" with the reason in Busy; past IdleWait in
// this run of the cycle (waited), the cycle is skipped (nothing measured
// yet) or left interrupted, and waitIdle returns ErrBusy.
func (t *Tuner) waitIdle(ctx context.Context, job Job, cy *store.Cycle, waited *time.Duration, progress func(store.Cycle), log zerolog.Logger) error {
	if t.cfg.Busy == nil {
		return nil
	}
	why := t.cfg.Busy(job.Key.Device)
	if why == "" {
		return nil
	}
	state := cy.State
	cy.State, cy.Busy = "waiting", why
	if err := t.cfg.Store.PutCycle(job.Key, *cy); err != nil {
		return notWritten(err)
	}
	if progress != nil {
		progress(*cy)
	}
	log.Info().Str("busy", why).Float64("waited_s", cy.WaitedS).Msg("device busy; cycle waiting")
	for {
		left := t.cfg.IdleWait - *waited
		if left <= 0 {
			break
		}
		t0 := time.Now() // real time: the wait is real sleeping
		timer := time.NewTimer(min(t.cfg.IdlePoll, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			*waited += time.Since(t0)
			cy.WaitedS += time.Since(t0).Seconds()
			cy.State = Unfinished
			if err := t.cfg.Store.PutCycle(job.Key, *cy); err != nil {
				return errors.Join(ctx.Err(), notWritten(err))
			}
			return ctx.Err()
		case <-timer.C:
		}
		*waited += time.Since(t0)
		cy.WaitedS += time.Since(t0).Seconds()
		if why = t.cfg.Busy(job.Key.Device); why == "" {
			cy.State = state
			log.Info().Float64("waited_s", cy.WaitedS).Msg("device idle; cycle goes on")
			if progress != nil {
				progress(*cy)
			}
			if err := t.cfg.Store.PutCycle(job.Key, *cy); err != nil {
				return notWritten(err)
			}
			return nil
		}
		cy.Busy = why
		if progress != nil {
			progress(*cy)
		}
	}
	cy.Ended = t.cfg.Now()
	cy.State = "skipped"
	if cy.Evals > 0 {
		cy.State, cy.Ended = Unfinished, time.Time{}
	}
	log.Warn().Str("busy", why).Float64("waited_s", cy.WaitedS).Str("state", cy.State).Msg("device stayed busy; cycle given up")
	if err := t.cfg.Store.PutCycle(job.Key, *cy); err != nil {
		return errors.Join(fmt.Errorf("%w: %s", ErrBusy, why), notWritten(err))
	}
	return fmt.Errorf("%w: %s", ErrBusy, why)
}

func (t *Tuner) measure(ctx context.Context, job Job, c genome.Config) (evaluate.Trial, error) {
	unlock, err := t.cfg.Lock(ctx, job.Key.Device)
	if err != nil {
		return evaluate.Trial{}, err
	}
	defer unlock()
	restore, err := t.applyKnobs(job, c)
	if err != nil {
		return evaluate.Trial{}, err
	}
	defer restore()
	var meter introspect.Meter
	if t.cfg.Meter != nil {
		meter = t.cfg.Meter(job.Key.Device)
	}
	var tr evaluate.Trial
	cost := 0.0
	var took time.Duration // measuring, cool-downs left out
	for attempt := 0; ; attempt++ {
		t0 := time.Now()
		var end func() introspect.Window
		if meter != nil {
			end = meter.Begin()
		}
		var err error
		tr, err = job.Evaluator.Evaluate(ctx, c, job.Problem)
		var w introspect.Window
		if end != nil {
			w = end()
		}
		took += time.Since(t0)
		if err != nil {
			return tr, fmt.Errorf("evaluate %s: %w", job.Space.Key(c), err)
		}
		tr = plausible(tr)
		if tr.At.IsZero() {
			tr.At = t.cfg.Now()
		}
		cost += tr.Cost
		// The energy of one run is the window's mean power over the
		// median time; an evaluator that reads energy itself keeps its own.
		if tr.OK() && tr.EnergyMJ == 0 && w.EnergyMJ > 0 && w.Seconds > 0 {
			tr.PowerW = w.EnergyMJ / w.Seconds / 1000
			tr.EnergyMJ = tr.PowerW * tr.Time
		}
		tr.Remeasured = attempt
		tr.MaxTempC, tr.SMClockMHz, tr.MemClockMHz, tr.UtilPct = w.MaxTempC, w.SMClockMHz, w.MemClockMHz, w.UtilPct
		tr.Throttle = w.Limits()
		if !tr.OK() || !w.Throttled() {
			break
		}
		if attempt >= t.cfg.Remeasure {
			t.cfg.Log.Warn().Str("job_id", job.Key.String()).Str("config", tr.Key).Strs("throttle", w.Throttle).Int("remeasured", attempt).Msg("device throttled in every measurement; the last is kept and marked")
			break
		}
		t.cfg.Log.Info().Str("job_id", job.Key.String()).Str("config", tr.Key).Strs("throttle", w.Throttle).Dur("cooldown", t.cfg.Cooldown).Msg("device throttled while measuring; measuring again")
		timer := time.NewTimer(t.cfg.Cooldown)
		select {
		case <-ctx.Done():
			timer.Stop()
			return tr, ctx.Err()
		case <-timer.C:
		}
	}
	tr.Cost = cost
	// One trial, however many measurements were thrown away for it.
	if t.cfg.Measured != nil {
		t.cfg.Measured(job, tr, took)
	}
	return tr, nil
}

func (t *Tuner) checkpoint(job Job, trials []store.Trial, strat evolve.Strategy, cy *store.Cycle) error {
	policy, err := strat.MarshalBinary()
	if err != nil {
		return fmt.Errorf("marshal policy: %w", err)
	}
	if err := t.cfg.Store.Checkpoint(job.Key, trials, policy, cy); err != nil {
		return notWritten(err)
	}
	return nil
}

// fail ends the cycle failed with err, in memory and, when the store takes
// it, on disk; a cycle the store never created (ID 0) is only returned.
func (t *Tuner) fail(job Job, cy store.Cycle, err error) (store.Cycle, error) {
	cy.State, cy.Error, cy.Ended = "failed", err.Error(), t.cfg.Now()
	if cy.ID == 0 {
		return cy, err
	}
	if perr := t.cfg.Store.PutCycle(job.Key, cy); perr != nil {
		err = errors.Join(err, notWritten(perr))
	}
	return cy, err
}

// finish closes the cycle and certifies and promotes the job's best
// valid config (see Certify).
func (t *Tuner) finish(ctx context.Context, job Job, cy store.Cycle, measureS float64, log zerolog.Logger) (store.Cycle, error) {
	t0 := t.cfg.Now()
	res, err := t.Certify(ctx, job, cy.ID)
	verifyS := t.cfg.Now().Sub(t0).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			cy.State = Unfinished
			if perr := t.cfg.Store.PutCycle(job.Key, cy); perr != nil {
				err = errors.Join(err, perr)
			}
			return cy, err
		}
		return t.fail(job, cy, err)
	}
	cy.State, cy.Ended, cy.Promoted = "done", t.cfg.Now(), res.Served
	if slices.Contains(res.Rejected, cy.BestKey) {
		// Its checks failed: the cycle's best is the best that passed.
		trials, err := t.cfg.Store.Trials(job.Key)
		if err != nil {
			return t.fail(job, cy, err)
		}
		failed := map[string]bool{}
		for _, k := range res.Rejected {
			failed[k] = true
		}
		cy.BestKey, cy.BestMS = job.passedBest(trials, cy.ID, failed)
	}
	if err := t.cfg.Store.PutCycle(job.Key, cy); err != nil {
		// Done, all but its record: the caller may write it later.
		return cy, notWritten(err)
	}
	log.Info().Int("evals", cy.Evals).Str("best", cy.BestKey).Float64("best_ms", cy.BestMS).Str("served", res.Served).Str("cert", res.Cert).Int("rejected", len(res.Rejected)).
		Float64("measure_s", measureS).Float64("verify_s", verifyS).Interface("allocation", cy.Allocation).Msg("cycle done")
	return cy, nil
}

func storeTrial(tr evaluate.Trial, cycle int) store.Trial {
	return store.Trial{
		Key: tr.Key, Status: string(tr.Status), TimeMS: tr.Time, TimesMS: tr.Times,
		CostS: tr.Cost, Error: tr.Error, At: tr.At, Cycle: cycle,
		EnergyMJ: tr.EnergyMJ, PowerW: tr.PowerW, Throttle: tr.Throttle, Remeasured: tr.Remeasured,
		MaxTempC: tr.MaxTempC, SMClockMHz: tr.SMClockMHz, MemClockMHz: tr.MemClockMHz, UtilPct: tr.UtilPct,
		PhasesMS: tr.PhasesMS,
	}
}
