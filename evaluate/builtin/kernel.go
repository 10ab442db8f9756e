package builtin

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// maxElems bounds the floats a problem may hold (inputs and output together),
// so a typo in a problem size cannot exhaust memory: 2^28 floats is 1 GiB.
const maxElems = 1 << 28

// runner executes one prepared config once: it reads in and overwrites out.
// A runner owns scratch buffers and is not safe for concurrent use.
type runner func(in Inputs, out []float32)

// def describes one builtin kernel.
type def struct {
	name     string
	dims     []string // names of the problem dims; also the space's Vars
	defaults [][]int  // default problem sizes
	params   []genome.Param
	// precision names the precision parameters and the stage each sets;
	// their values rank by accuracy (precision.Stage.CheckOrder).
	precision map[string]precision.Stage
	cons      []string
	// check rejects dims the kernel cannot run beyond count and sign.
	check func(d []int) error
	// sizes returns the lengths of Inputs.A, Inputs.B and the output.
	sizes func(d []int) (a, b, out int)
	// flops is the floating-point operations of one run (a multiply-add
	// counts 2), whatever the config.
	flops func(d []int) float64
	// prepare decodes a config (parameter name -> value) and allocates its
	// scratch buffers.
	prepare func(v map[string]genome.Value, d []int) runner
	// ref computes the output in float64 with a straightforward loop.
	ref func(d []int, in Inputs) []float64
	// verify holds what Verify needs beyond ref; a kernel without it gets no
	// error bound and no ragged case.
	verify verifyDef
	// testVariant, when set, returns the kernel with Options.TestWrongVariant.
	testVariant func() def
}

// defs returns the builtin kernels by name.
func defs() map[string]def {
	return map[string]def{
		"conv2d": conv2dDef(),
		"reduce": reduceDef(),
		"sgemm":  sgemmDef(),
	}
}

// checkProblem reports whether p is a problem of kd, wrapping
// evaluate.ErrUnknownProblem when it is not.
func (kd def) checkProblem(p evaluate.Problem) error {
	d := p.Dims
	if len(d) != len(kd.dims) {
		return fmt.Errorf("problem %q: %w: %d dims, want %d (%s)",
			p.String(), evaluate.ErrUnknownProblem, len(d), len(kd.dims), strings.Join(kd.dims, ","))
	}
	for i, x := range d {
		if x <= 0 {
			return fmt.Errorf("problem %q: %w: dim %s is %d, want > 0",
				p.String(), evaluate.ErrUnknownProblem, kd.dims[i], x)
		}
		// Every size is a product of at most two dims, so bounding each dim
		// first keeps the products below overflow.
		if x > maxElems {
			return fmt.Errorf("problem %q: %w: dim %s is too large",
				p.String(), evaluate.ErrUnknownProblem, kd.dims[i])
		}
	}
	if kd.check != nil {
		if err := kd.check(d); err != nil {
			return fmt.Errorf("problem %q: %w: %v", p.String(), evaluate.ErrUnknownProblem, err)
		}
	}
	a, b, out := kd.sizes(d)
	if float64(a)+float64(b)+float64(out) > maxElems {
		return fmt.Errorf("problem %q: %w: too large", p.String(), evaluate.ErrUnknownProblem)
	}
	return nil
}

// space builds the search space of kd for dims d.
func (kd def) space(d []int) (*genome.Space, error) {
	vars := make(map[string]genome.Value, len(kd.dims))
	for i, name := range kd.dims {
		vars[name] = genome.Int(int64(d[i]))
	}
	return genome.NewSpace(kd.params, genome.SpaceOptions{Constraints: kd.cons, Vars: vars})
}

// newInputs fills the inputs of dims d with uniform values in [-1, 1) drawn
// from a PCG seeded with (seed, 0): A first, then B.
func (kd def) newInputs(d []int, seed uint64) Inputs {
	rng := rand.New(rand.NewPCG(seed, 0))
	na, nb, _ := kd.sizes(d)
	fill := func(n int) []float32 {
		if n == 0 {
			return nil
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(2*rng.Float64() - 1)
		}
		return x
	}
	a := fill(na)
	b := fill(nb)
	return Inputs{A: a, B: b, cache: new(storeCache)}
}

// absInputs is in with every value made its magnitude: the positive
// inputs of VerifySettings.Inputs "positive".
func absInputs(in Inputs) Inputs {
	abs := func(x []float32) []float32 {
		if x == nil {
			return nil
		}
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(math.Abs(float64(v)))
		}
		return out
	}
	return Inputs{A: abs(in.A), B: abs(in.B), cache: new(storeCache)}
}

// checkInputs reports whether in fits dims d.
func (kd def) checkInputs(d []int, in Inputs) error {
	na, nb, _ := kd.sizes(d)
	if len(in.A) != na {
		return fmt.Errorf("input A: %w: %d values, want %d", ErrBadInputs, len(in.A), na)
	}
	if len(in.B) != nb {
		return fmt.Errorf("input B: %w: %d values, want %d", ErrBadInputs, len(in.B), nb)
	}
	return nil
}

// intParam is an int parameter; def is the index of its default value.
func intParam(name string, def int, vals ...int64) genome.Param {
	p := genome.Param{Name: name, Kind: genome.KindInt, Default: def}
	for _, v := range vals {
		p.Values = append(p.Values, genome.Int(v))
	}
	return p
}

// strParam is a string parameter; def is the index of its default value.
func strParam(name string, def int, vals ...string) genome.Param {
	p := genome.Param{Name: name, Kind: genome.KindString, Default: def}
	for _, v := range vals {
		p.Values = append(p.Values, genome.Str(v))
	}
	return p
}

// formatParam is a precision parameter whose values are formats, listed
// most accurate first; the first is the default.
func formatParam(name string, fs ...precision.Format) genome.Param {
	p := genome.Param{Name: name, Kind: genome.KindString}
	for _, f := range fs {
		p.Values = append(p.Values, genome.Str(f.String()))
	}
	return p
}

// boolParam is a bool parameter with values False, True and default False.
func boolParam(name string) genome.Param {
	return genome.Param{Name: name, Kind: genome.KindBool, Values: []genome.Value{genome.Bool(false), genome.Bool(true)}}
}

// stopped reports whether the run on in should stop: its context is done.
func (in Inputs) stopped() bool { return in.stop != nil && in.stop.Load() }

// ceilDiv is a/b rounded up, for positive a and b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// parallel runs fn(0), ..., fn(n-1), each on its own goroutine (inline when n
// is 1), and waits for them. A panic in any of them is re-raised in the
// caller's goroutine, where the caller can recover it.
func parallel(n int, fn func(w int)) {
	if n <= 1 {
		fn(0)
		return
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicked bool
		pv       any
	)
	for w := range n {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if !panicked {
						panicked, pv = true, r
					}
					mu.Unlock()
				}
			}()
			fn(w)
		})
	}
	wg.Wait()
	if panicked {
		panic(pv)
	}
}

// protect runs fn and turns a panic into an error.
func protect(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	fn()
	return nil
}
