package builtin

import (
	"context"
	"fmt"
	"maps"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/introspect"
	"github.com/quasim/quasim/precision"
)

// Kernels lists the builtin kernel names, sorted.
func Kernels() []string {
	return slices.Sorted(maps.Keys(defs()))
}

// Options tunes measurement; zero values take defaults.
type Options struct {
	Reps   evaluate.Reps    // warm-up and repetitions (evaluate.Reps defaults)
	Device string           // device class reported; default the CPU's (introspect.CPU.Class)
	Now    func() time.Time // clock for Trial.At; default time.Now
	Seed   uint64           // seed for the random input data (default 1)
	// TestWrongVariant adds a deliberately wrong config, for tests of
	// verification only: sgemm's loop_order gets the extra value ikj_fast,
	// the ikj kernel minus the last partial block of tile_m rows (left
	// zero). The other kernels ignore it.
	TestWrongVariant bool
}

// cpuClass is this machine's CPU device class, read once; where /proc
// cannot be read it falls back to cpu/<GOARCH>/<NumCPU>c.
var cpuClass = sync.OnceValue(func() string {
	c, err := introspect.ReadCPU(os.DirFS("/"))
	if err != nil || c.Model == "" {
		return fmt.Sprintf("cpu/%s/%dc", goruntime.GOARCH, goruntime.NumCPU())
	}
	return c.Class()
})

// CPUClass is the device class builtin kernels measure on: this machine's CPU.
func CPUClass() string { return cpuClass() }

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	o.Reps = o.Reps.WithDefaults()
	if o.Device == "" {
		o.Device = cpuClass()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Inputs are the input data of one run. sgemm reads A (m×k, row-major) and
// B (k×n, row-major); conv2d reads A, the h×w image (row-major), and B, the
// f×f filter (row-major); reduce reads A, the n-vector, and no B.
type Inputs struct {
	A, B []float32

	// stop, when set, makes a run or reference computation return early,
	// with a meaningless output: Evaluate and Verify set it once their
	// context is done, so shutdown need not wait for a long run.
	stop *atomic.Bool
	// cache holds A as stored in reduced formats, made on first use (see
	// storeCache); nil makes each run store it anew. Inputs made by
	// NewInputs have one; their A must not change after a run.
	cache *storeCache
}

// Kernel is the evaluator of one builtin kernel. It is safe for concurrent
// use, though concurrent Evaluate calls disturb each other's timings.
type Kernel struct {
	def def
	opt Options

	mu     sync.Mutex
	spaces map[string]*genome.Space // by problem string
	inputs map[string]*heldInputs   // by problem string, seeded with opt.Seed
	// after starts the timer that drops unused inputs; time.AfterFunc
	// but in tests.
	after func(time.Duration, func()) resetter
}

// keepInputs is how long a problem's inputs stay made after their last
// use. A cycle uses them without pause; once it ends they go, so an idle
// daemon does not hold every problem's input data (reduce at 8,388,608
// elements alone is 32 MiB, and with the GC's headroom the builtin
// kernels' inputs kept the daemon at 200 MB after its first cycles).
const keepInputs = 30 * time.Second

// heldInputs are one problem's inputs and the timer that drops them.
type heldInputs struct {
	in   Inputs
	drop resetter
}

type resetter interface{ Reset(time.Duration) bool }

var (
	_ evaluate.Evaluator = (*Kernel)(nil)
	_ evaluate.Verifier  = (*Kernel)(nil)
)

// New returns the evaluator of a builtin kernel; an unknown name is an error
// listing the known ones.
func New(kernel string, opt Options) (*Kernel, error) {
	kd, ok := defs()[kernel]
	if !ok {
		return nil, fmt.Errorf("new kernel %q: %w (known: %s)", kernel, ErrUnknownKernel, strings.Join(Kernels(), ", "))
	}
	if opt.TestWrongVariant && kd.testVariant != nil {
		kd = kd.testVariant()
	}
	return newKernel(kd, opt), nil
}

func newKernel(kd def, opt Options) *Kernel {
	return &Kernel{
		def:    kd,
		opt:    opt.withDefaults(),
		spaces: make(map[string]*genome.Space),
		inputs: make(map[string]*heldInputs),
		after:  func(d time.Duration, f func()) resetter { return time.AfterFunc(d, f) },
	}
}

// Name is the kernel's name.
func (k *Kernel) Name() string { return k.def.name }

// Precision returns the kernel's precision parameters and the stage each
// sets (nil for a kernel with none). Their values are listed most accurate
// first, as precision.Stage.Rank orders them.
func (k *Kernel) Precision() map[string]precision.Stage { return maps.Clone(k.def.precision) }

// Device names the device class the kernel measures on.
func (k *Kernel) Device() string { return k.opt.Device }

// DefaultProblems returns a few problem sizes that take about 1 to 50 ms per
// run at the default config on a 2-core machine.
func (k *Kernel) DefaultProblems() []evaluate.Problem {
	out := make([]evaluate.Problem, len(k.def.defaults))
	for i, d := range k.def.defaults {
		parts := make([]string, len(d))
		for j, x := range d {
			parts[j] = fmt.Sprint(x)
		}
		out[i] = evaluate.Problem{Name: strings.Join(parts, "x"), Dims: slices.Clone(d), Names: slices.Clone(k.def.dims)}
	}
	return out
}

// Space returns the search space for problem p. The dims are positional
// (sgemm: m,n,k; conv2d: h,w,f; reduce: n) and p.Names is not consulted; the
// constraints name the dims by those names. The error wraps
// evaluate.ErrUnknownProblem when p has the wrong number of dims, a
// non-positive dim, or dims the kernel cannot run.
func (k *Kernel) Space(p evaluate.Problem) (*genome.Space, error) {
	s, err := k.space(p)
	if err != nil {
		return nil, fmt.Errorf("%s space: %w", k.def.name, err)
	}
	return s, nil
}

// space is Space with errors that do not name the kernel.
func (k *Kernel) space(p evaluate.Problem) (*genome.Space, error) {
	if err := k.def.checkProblem(p); err != nil {
		return nil, err
	}
	key := p.String()
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.spaces[key]; ok {
		return s, nil
	}
	s, err := k.def.space(p.Dims)
	if err != nil {
		return nil, fmt.Errorf("problem %q: %w", key, err)
	}
	k.spaces[key] = s
	return s, nil
}

// NewInputs makes seeded random inputs for p: values uniform in [-1, 1)
// drawn from a math/rand/v2 PCG seeded with (seed, 0), A before B. It returns
// empty Inputs for a problem the kernel does not know.
func (k *Kernel) NewInputs(p evaluate.Problem, seed uint64) Inputs {
	if k.def.checkProblem(p) != nil {
		return Inputs{}
	}
	return k.def.newInputs(p.Dims, seed)
}

// Reference computes the output of p in float64 with a straightforward loop,
// the verification reference. It returns nil for a problem the kernel does
// not know or inputs that do not fit it.
func (k *Kernel) Reference(p evaluate.Problem, in Inputs) []float64 {
	if k.def.checkProblem(p) != nil || k.def.checkInputs(p.Dims, in) != nil {
		return nil
	}
	return k.def.ref(p.Dims, in)
}

// Run executes config c once on the given inputs and returns the output (for
// verification by callers). A config outside the space is an error wrapping
// evaluate.ErrNotInSpace; a panic in the kernel is returned as an error.
func (k *Kernel) Run(c genome.Config, p evaluate.Problem, in Inputs) ([]float32, error) {
	s, err := k.space(p)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", k.def.name, err)
	}
	if err := checkConfig(s, c); err != nil {
		return nil, fmt.Errorf("run %s: %w", k.def.name, err)
	}
	if err := k.def.checkInputs(p.Dims, in); err != nil {
		return nil, fmt.Errorf("run %s: %w", k.def.name, err)
	}
	_, _, n := k.def.sizes(p.Dims)
	out := make([]float32, n)
	err = protect(func() { k.def.prepare(s.Map(c), p.Dims)(in, out) })
	if err != nil {
		return nil, fmt.Errorf("run %s config %q: %w", k.def.name, s.Key(c), err)
	}
	return out, nil
}

// Evaluate measures config c of problem p: warm-up, then timed runs until
// Options.Reps has enough.
// A kernel that panics gives a trial with StatusRuntime. The error is for a
// bad problem, a config outside the space (wrapping evaluate.ErrNotInSpace),
// or a cancelled ctx (ctx.Err(); a run in progress stops within one tile
// of work).
func (k *Kernel) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	s, err := k.space(p)
	if err != nil {
		return evaluate.Trial{}, fmt.Errorf("evaluate %s: %w", k.def.name, err)
	}
	if err := checkConfig(s, c); err != nil {
		return evaluate.Trial{}, fmt.Errorf("evaluate %s: %w", k.def.name, err)
	}
	if err := ctx.Err(); err != nil {
		return evaluate.Trial{}, err
	}
	in := k.cachedInputs(p)
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	in.stop = &stop
	tr := evaluate.Trial{Key: s.Key(c), Device: k.opt.Device, At: k.opt.Now()}
	start := time.Now()
	fail := func(err error) (evaluate.Trial, error) {
		tr.Status = evaluate.StatusRuntime
		tr.Error = err.Error()
		tr.Cost = time.Since(start).Seconds()
		return tr, nil
	}

	_, _, n := k.def.sizes(p.Dims)
	out := make([]float32, n)
	var run runner
	if err := protect(func() { run = k.def.prepare(s.Map(c), p.Dims) }); err != nil {
		return fail(err)
	}
	once := func() error { return protect(func() { run(in, out) }) }

	for range k.opt.Reps.Warmup {
		if err := ctx.Err(); err != nil {
			return evaluate.Trial{}, err
		}
		if err := once(); err != nil {
			return fail(err)
		}
	}
	for !k.opt.Reps.Enough(tr.Times) {
		if err := ctx.Err(); err != nil {
			return evaluate.Trial{}, err
		}
		t0 := time.Now()
		err := once()
		d := time.Since(t0)
		if err := ctx.Err(); err != nil {
			return evaluate.Trial{}, err // the run was cut short
		}
		if err != nil {
			return fail(err)
		}
		tr.Times = append(tr.Times, float64(d)/float64(time.Millisecond))
	}
	tr.Status = evaluate.StatusOK
	tr.Time = median(tr.Times)
	tr.Cost = time.Since(start).Seconds()
	return tr, nil
}

// Work is one run's flops and its compulsory traffic: the float32 inputs
// read once and the output written once. Caches make the real traffic of a
// good config close to it and of a poor one larger, which is what a
// roofline shows.
func (k *Kernel) Work(p evaluate.Problem) (evaluate.Work, bool) {
	if k.def.flops == nil || k.def.checkProblem(p) != nil {
		return evaluate.Work{}, false
	}
	a, b, out := k.def.sizes(p.Dims)
	return evaluate.Work{Flops: k.def.flops(p.Dims), Bytes: 4 * float64(a+b+out)}, true
}

// cachedInputs returns the inputs of p seeded with Options.Seed, making them
// on first use; they are dropped keepInputs after their last use.
func (k *Kernel) cachedInputs(p evaluate.Problem) Inputs {
	key := p.String()
	k.mu.Lock()
	defer k.mu.Unlock()
	if h, ok := k.inputs[key]; ok {
		h.drop.Reset(keepInputs)
		return h.in
	}
	h := &heldInputs{in: k.def.newInputs(p.Dims, k.opt.Seed)}
	h.drop = k.after(keepInputs, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.inputs[key] == h {
			delete(k.inputs, key)
		}
	})
	k.inputs[key] = h
	return h.in
}

// checkConfig wraps evaluate.ErrNotInSpace with the reason c is not in s.
func checkConfig(s *genome.Space, c genome.Config) error {
	if err := s.Check(c); err != nil {
		return fmt.Errorf("%w: %v", evaluate.ErrNotInSpace, err)
	}
	return nil
}

// median is the median of x; 0 for none.
func median(x []float64) float64 { return evaluate.Median(x) }
