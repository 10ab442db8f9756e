package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// compiled keeps the machine code of modules compiled in this process, so
// a module loaded again (a reload, a second evaluator of the same file) is
// not compiled again. wazero keys it by the module's bytes and the
// runtime's configuration.
var compiled = wazero.NewCompilationCache()

// Options configures an Evaluator. Zero values take the defaults.
type Options struct {
	// MemoryLimitMiB bounds each instance's linear memory (default 256).
	MemoryLimitMiB int
	// Reps is the warm-up and repetitions of a measurement (evaluate.Reps
	// defaults).
	Reps evaluate.Reps
	// Timeout bounds a config's guarded first run, which it interrupts,
	// and then its timed runs, checked between them (default 60s).
	Timeout time.Duration
}

// ABI is the version of docs/kernel-authors/wasm-abi.md this package speaks.
const ABI = 1

// declaration is what quasim_params returns.
type declaration struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Params      []param  `json:"params"`
	Constraints []string `json:"constraints,omitempty"`
}

type param struct {
	Name    string `json:"name"`
	Values  []any  `json:"values"`
	Default any    `json:"default,omitempty"`
}

// Evaluator runs one module. It is safe for concurrent use; measurements
// are sequential.
//
// The module is compiled twice. Under guard, calls stop when their ctx is
// done, which costs wazero's interruption checks (the matmul example ran
// 8x slower); fast has none. A config's first run on a problem is made
// under guard with the timeout as its deadline, and only a config whose
// run returned is timed under fast (docs/kernel-authors/wasm-abi.md says why that is
// enough).
type Evaluator struct {
	path string
	opt  Options
	decl declaration
	base []genome.Param

	mu     sync.Mutex
	fast   slot
	guard  slot
	proven map[string]bool // problem and config keys whose guarded run returned
	refs   map[string]float64
}

// slot is a module compiled under one runtime and its live instance.
type slot struct {
	rt   wazero.Runtime
	mod  wazero.CompiledModule
	inst api.Module // nil until needed, and after a trap
}

// Load compiles the module at path and reads its declaration.
func Load(ctx context.Context, path string, opt Options) (*Evaluator, error) {
	if opt.MemoryLimitMiB <= 0 {
		opt.MemoryLimitMiB = 256
	}
	opt.Reps = opt.Reps.WithDefaults()
	if opt.Timeout <= 0 {
		opt.Timeout = 60 * time.Second
	}
	code, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wasm module: %w", err)
	}
	pages := uint32(opt.MemoryLimitMiB) * 16 // 64 KiB pages
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(pages).WithCompilationCache(compiled)
	e := &Evaluator{path: path, opt: opt, proven: map[string]bool{}, refs: map[string]float64{}}
	if err := e.fast.compile(ctx, cfg, code); err != nil {
		e.fast.close()
		return nil, fmt.Errorf("wasm module %s: %w", path, err)
	}
	if err := e.guard.compile(ctx, cfg.WithCloseOnContextDone(true), code); err != nil {
		e.Close()
		return nil, fmt.Errorf("wasm module %s: %w", path, err)
	}
	if err := e.declare(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("wasm module %s: %w", path, err)
	}
	return e, nil
}

// compile makes s's runtime with WASI and compiles code under it.
func (s *slot) compile(ctx context.Context, cfg wazero.RuntimeConfig, code []byte) error {
	s.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, s.rt); err != nil {
		return fmt.Errorf("wasi: %w", err)
	}
	var err error
	if s.mod, err = s.rt.CompileModule(ctx, code); err != nil {
		return err
	}
	for _, name := range []string{"quasim_abi", "quasim_params", "quasim_buffer", "quasim_setup", "quasim_run", "quasim_checksum"} {
		if _, ok := s.mod.ExportedFunctions()[name]; !ok {
			return fmt.Errorf("no export %s (docs/kernel-authors/wasm-abi.md)", name)
		}
	}
	return nil
}

// declare reads the module's declaration from a first instance.
func (e *Evaluator) declare(ctx context.Context) error {
	inst, err := e.fast.instance(ctx)
	if err != nil {
		return err
	}
	res, err := inst.ExportedFunction("quasim_abi").Call(ctx)
	if err != nil {
		return fmt.Errorf("quasim_abi: %w", err)
	}
	if v := int32(res[0]); v != ABI {
		return fmt.Errorf("ABI version %d, this quasimd speaks %d", v, ABI)
	}
	res, err = inst.ExportedFunction("quasim_params").Call(ctx)
	if err != nil {
		return fmt.Errorf("quasim_params: %w", err)
	}
	ptr, n := uint32(res[0]>>32), uint32(res[0])
	b, ok := inst.Memory().Read(ptr, n)
	if !ok {
		return fmt.Errorf("quasim_params: %d bytes at %d are outside memory", n, ptr)
	}
	if err := json.Unmarshal(b, &e.decl); err != nil {
		return fmt.Errorf("quasim_params: %w", err)
	}
	if e.decl.Name == "" || len(e.decl.Params) == 0 {
		return errors.New("quasim_params: no name or no params")
	}
	for i, p := range e.decl.Params {
		if !genome.IsName(p.Name) || len(p.Values) == 0 {
			return fmt.Errorf("quasim_params: params[%d] (%q): bad name or no values", i, p.Name)
		}
		gp := genome.Param{Name: p.Name}
		for j, v := range p.Values {
			gv, err := genome.ValueOf(v)
			if err != nil {
				return fmt.Errorf("quasim_params: params[%d].values[%d]: %w", i, j, err)
			}
			if j == 0 {
				gp.Kind = gv.Kind
			}
			gp.Values = append(gp.Values, gv)
		}
		if p.Default != nil {
			dv, err := genome.ValueOf(p.Default)
			if err != nil {
				return fmt.Errorf("quasim_params: params[%d].default: %w", i, err)
			}
			gp.Default = slices.IndexFunc(gp.Values, func(v genome.Value) bool { return v.String() == dv.String() })
			if gp.Default < 0 {
				return fmt.Errorf("quasim_params: params[%d].default %v is not among its values", i, p.Default)
			}
		}
		e.base = append(e.base, gp)
	}
	return nil
}

// instance returns s's live instance, making one if there is none.
// Called with e.mu held, or before e is shared.
func (s *slot) instance(ctx context.Context) (api.Module, error) {
	if s.inst != nil {
		return s.inst, nil
	}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	inst, err := s.rt.InstantiateModule(ctx, s.mod, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	s.inst = inst
	return inst, nil
}

// discard drops the instance after a trap or an interruption.
func (s *slot) discard() {
	if s.inst != nil {
		s.inst.Close(context.Background())
		s.inst = nil
	}
}

// close releases s's runtime, if it has one.
func (s *slot) close() error {
	s.inst = nil
	if s.rt == nil {
		return nil
	}
	return s.rt.Close(context.Background())
}

// Close releases the runtimes.
func (e *Evaluator) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return errors.Join(e.fast.close(), e.guard.close())
}

// Device implements evaluate.Evaluator.
func (e *Evaluator) Device() string { return "wasm/wazero" }

// Space implements evaluate.Evaluator.
func (e *Evaluator) Space(p evaluate.Problem) (*genome.Space, error) {
	sp, err := genome.NewSpace(slices.Clone(e.base), genome.SpaceOptions{Constraints: e.decl.Constraints, Vars: p.Vars()})
	if err != nil {
		return nil, fmt.Errorf("wasm module %s: %w", e.path, err)
	}
	return sp, nil
}

// inputs is the buffer the ABI asks for: the config then the dims.
func inputs(sp *genome.Space, c genome.Config, p evaluate.Problem) []uint64 {
	var out []uint64
	for i, pr := range sp.Params() {
		v := pr.Values[c[i]]
		if v.Kind == genome.KindInt {
			out = append(out, uint64(v.I))
		} else {
			out = append(out, uint64(c[i]))
		}
	}
	for _, d := range p.Dims {
		out = append(out, uint64(int64(d)))
	}
	return out
}

// measure sets c up, makes warmup untimed runs, then timed runs until
// enough says so, returning the times and the last checksum. A config not
// yet proven on p first runs once under guard. A failure of the kernel is a
// status and a note; the error is for ctx.
func (e *Evaluator) measure(ctx context.Context, sp *genome.Space, c genome.Config, p evaluate.Problem, warmup int, enough func([]float64) bool) ([]float64, float64, evaluate.Status, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	in := inputs(sp, c, p)
	key := p.String() + " " + sp.Key(c)
	if !e.proven[key] {
		if status, note, err := e.prove(ctx, in, sp.Len(), len(p.Dims)); err != nil || status != evaluate.StatusOK {
			return nil, 0, status, note, err
		}
		e.proven[key] = true
	}
	deadline := time.Now().Add(e.opt.Timeout)
	inst, status, note, err := e.setup(ctx, ctx, &e.fast, in, sp.Len(), len(p.Dims))
	if inst == nil {
		return nil, 0, status, note, err
	}
	fail := func(what string, err error) ([]float64, float64, evaluate.Status, string, error) {
		status, note, err := e.fail(ctx, ctx, &e.fast, what, err)
		return nil, 0, status, note, err
	}
	run := inst.ExportedFunction("quasim_run")
	var times []float64
	for i := 0; i < warmup || !enough(times); i++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, "", "", err
		}
		if time.Now().After(deadline) {
			return nil, 0, evaluate.StatusTimeout, fmt.Sprintf("%d runs (%d warm-up) within %s, not enough", i, min(i, warmup), e.opt.Timeout), nil
		}
		t0 := time.Now()
		res, err := run.Call(ctx)
		dt := time.Since(t0)
		if err != nil {
			return fail("quasim_run", err)
		}
		if code := int32(res[0]); code != 0 {
			return nil, 0, evaluate.StatusRuntime, fmt.Sprintf("quasim_run returned %d", code), nil
		}
		if i >= warmup {
			times = append(times, float64(dt.Nanoseconds())/1e6)
		}
	}
	res, err := inst.ExportedFunction("quasim_checksum").Call(ctx)
	if err != nil {
		return fail("quasim_checksum", err)
	}
	return times, api.DecodeF64(res[0]), evaluate.StatusOK, "", nil
}

// prove sets the inputs up and runs the kernel once under guard, with the
// timeout as the deadline: a run that does not return by then, or by the
// end of ctx, is interrupted and its instance discarded. A new instance's
// initialisation has a deadline of its own.
func (e *Evaluator) prove(ctx context.Context, in []uint64, nparams, ndims int) (evaluate.Status, string, error) {
	ictx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
	_, err := e.guard.instance(ictx)
	late := ictx.Err() != nil
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", "", ctx.Err()
	case late:
		return evaluate.StatusTimeout, fmt.Sprintf("instantiating did not finish within %s", e.opt.Timeout), nil
	default:
		return evaluate.StatusRuntime, err.Error(), nil
	}
	gctx, cancel := context.WithTimeout(ctx, e.opt.Timeout)
	defer cancel()
	inst, status, note, err := e.setup(ctx, gctx, &e.guard, in, nparams, ndims)
	if inst == nil {
		return status, note, err
	}
	res, err := inst.ExportedFunction("quasim_run").Call(gctx)
	if err != nil {
		return e.fail(ctx, gctx, &e.guard, "the first quasim_run", err)
	}
	if code := int32(res[0]); code != 0 {
		return evaluate.StatusRuntime, fmt.Sprintf("quasim_run returned %d", code), nil
	}
	return evaluate.StatusOK, "", nil
}

// setup writes in to the buffer of s's instance and calls quasim_setup
// under cctx, returning the instance, or no instance and why.
func (e *Evaluator) setup(ctx, cctx context.Context, s *slot, in []uint64, nparams, ndims int) (api.Module, evaluate.Status, string, error) {
	inst, err := s.instance(cctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", "", ctx.Err()
		}
		return nil, evaluate.StatusRuntime, err.Error(), nil
	}
	res, err := inst.ExportedFunction("quasim_buffer").Call(cctx, uint64(len(in)))
	if err != nil {
		status, note, err := e.fail(ctx, cctx, s, "quasim_buffer", err)
		return nil, status, note, err
	}
	mem := inst.Memory()
	for i, v := range in {
		if !mem.WriteUint64Le(uint32(res[0])+uint32(8*i), v) {
			s.discard()
			return nil, evaluate.StatusRuntime, "quasim_buffer returned an address outside memory", nil
		}
	}
	res, err = inst.ExportedFunction("quasim_setup").Call(cctx, uint64(nparams), uint64(ndims))
	if err != nil {
		status, note, err := e.fail(ctx, cctx, s, "quasim_setup", err)
		return nil, status, note, err
	}
	switch code := int32(res[0]); code {
	case 0:
		return inst, evaluate.StatusOK, "", nil
	case 1:
		return nil, evaluate.StatusInvalid, "quasim_setup: the config cannot run", nil
	default:
		return nil, evaluate.StatusRuntime, fmt.Sprintf("quasim_setup returned %d", code), nil
	}
}

// fail discards s's instance after a call under cctx failed: the end of
// ctx is the error, the end of cctx alone a timeout, anything else a trap.
func (e *Evaluator) fail(ctx, cctx context.Context, s *slot, what string, err error) (evaluate.Status, string, error) {
	s.discard()
	switch {
	case ctx.Err() != nil:
		return "", "", ctx.Err()
	case cctx.Err() != nil:
		return evaluate.StatusTimeout, fmt.Sprintf("%s did not return within %s; interrupted, instance discarded", what, e.opt.Timeout), nil
	}
	return evaluate.StatusRuntime, fmt.Sprintf("%s trapped: %v; instance discarded", what, err), nil
}

// Evaluate implements evaluate.Evaluator.
func (e *Evaluator) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	sp, err := e.Space(p)
	if err != nil {
		return evaluate.Trial{}, err
	}
	if !sp.InRange(c) {
		return evaluate.Trial{}, fmt.Errorf("wasm module %s: %w: %v", e.path, evaluate.ErrNotInSpace, []int(c))
	}
	start := time.Now()
	tr := evaluate.Trial{Key: sp.Key(c), Device: e.Device(), At: start}
	if err := sp.Check(c); err != nil {
		tr.Status, tr.Error = evaluate.StatusConstraints, err.Error()
		return tr, nil
	}
	times, _, status, note, err := e.measure(ctx, sp, c, p, e.opt.Reps.Warmup, e.opt.Reps.Enough)
	tr.Cost = time.Since(start).Seconds()
	if err != nil {
		return tr, err
	}
	if status != evaluate.StatusOK {
		tr.Status, tr.Error = status, note
		return tr, nil
	}
	tr.Status, tr.Times, tr.Time = evaluate.StatusOK, times, evaluate.Median(times)
	return tr, nil
}

var _ evaluate.Verifier = (*Evaluator)(nil)

// Verify implements evaluate.Verifier: the config's checksum against the
// default config's, repeated runs for determinism, and the latency of the
// timed runs; the module reports no outputs, so the error bound is not
// checked, and the report says so.
func (e *Evaluator) Verify(ctx context.Context, c genome.Config, p evaluate.Problem, s evaluate.VerifySettings) (evaluate.VerifyReport, error) {
	start := time.Now()
	if err := s.Validate(); err != nil {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", e.path, err)
	}
	s = s.WithDefaults()
	sp, err := e.Space(p)
	if err != nil {
		return evaluate.VerifyReport{}, err
	}
	if !sp.InRange(c) {
		return evaluate.VerifyReport{}, fmt.Errorf("verify %s: %w", e.path, evaluate.ErrNotInSpace)
	}
	rep := evaluate.VerifyReport{
		Parity: evaluate.ParityResult{Tolerance: s.Tolerance, Value: s.Value, Cases: []string{"checksum of problem " + p.String()},
			Reference: "the checksum the module reports for the default config"},
		ErrorBound:  evaluate.ErrorBoundResult{NotChecked: "a wasm kernel reports a checksum, not its outputs: there is no error to bound"},
		Determinism: evaluate.DeterminismResult{Runs: s.Repeats, Policy: s.Nondeterministic},
	}
	e.mu.Lock()
	ref, ok := e.refs[p.String()]
	e.mu.Unlock()
	if !ok {
		_, sum, status, note, err := e.measure(ctx, sp, sp.Default(), p, 0, count(1))
		if err != nil {
			return rep, err
		}
		if status != evaluate.StatusOK {
			rep.Parity.Worst = fmt.Sprintf("the default config, the reference, failed: %s: %s", status, note)
			return rep, nil
		}
		ref = sum
		e.mu.Lock()
		e.refs[p.String()] = sum
		e.mu.Unlock()
	}
	var sums []float64
	for range s.Repeats {
		_, sum, status, note, err := e.measure(ctx, sp, c, p, 0, count(1))
		if err != nil {
			return rep, err
		}
		if status != evaluate.StatusOK {
			rep.Parity.Worst = fmt.Sprintf("verify run: %s: %s", status, note)
			return rep, nil
		}
		sums = append(sums, sum)
	}
	got := sums[0]
	rep.Parity.MaxAbsErr = math.Abs(got - ref)
	rep.Parity.MaxRelErr = rep.Parity.MaxAbsErr / math.Max(math.Abs(ref), math.SmallestNonzeroFloat32)
	switch s.Tolerance {
	case evaluate.ToleranceAbs:
		rep.Parity.Passed = rep.Parity.MaxAbsErr <= s.Value
	default:
		rep.Parity.Passed = rep.Parity.MaxRelErr <= s.Value
	}
	rep.Parity.Worst = fmt.Sprintf("checksum %g against the default's %g", got, ref)
	rep.Determinism.Identical = true
	for _, v := range sums[1:] {
		rep.Determinism.Identical = rep.Determinism.Identical && math.Float64bits(v) == math.Float64bits(got)
		rep.Determinism.MaxSpread = math.Max(rep.Determinism.MaxSpread, math.Abs(v-got))
	}
	rep.Determinism.Passed = rep.Determinism.Identical || s.Nondeterministic == evaluate.PolicyCertify
	rep.CostS = time.Since(start).Seconds()
	return rep, nil
}

// count is a measurement of n timed runs.
func count(n int) func([]float64) bool {
	return func(t []float64) bool { return len(t) >= n }
}
