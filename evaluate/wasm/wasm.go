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

// Options configures an Evaluator. Zero values take the defaults.
type Options struct {
	// MemoryLimitMiB bounds each instance's linear memory (default 256).
	MemoryLimitMiB int
	// Reps is the warm-up and repetitions of a measurement (evaluate.Reps
	// defaults).
	Reps evaluate.Reps
	// Timeout bounds a measurement, checked between runs (default 60s).
	Timeout time.Duration
}

// ABI is the version of docs/wasm-abi.md this package speaks.
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
type Evaluator struct {
	path string
	opt  Options
	rt   wazero.Runtime
	mod  wazero.CompiledModule
	decl declaration
	base []genome.Param

	mu   sync.Mutex
	inst api.Module // nil until needed, and after a trap
	refs map[string]float64
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
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(uint32(opt.MemoryLimitMiB) * 16) // 64 KiB pages
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	e := &Evaluator{path: path, opt: opt, rt: rt, refs: map[string]float64{}}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm module %s: wasi: %w", path, err)
	}
	if e.mod, err = rt.CompileModule(ctx, code); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm module %s: %w", path, err)
	}
	for _, name := range []string{"quasim_abi", "quasim_params", "quasim_buffer", "quasim_setup", "quasim_run", "quasim_checksum"} {
		if _, ok := e.mod.ExportedFunctions()[name]; !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("wasm module %s: no export %s (docs/wasm-abi.md)", path, name)
		}
	}
	if err := e.declare(ctx); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm module %s: %w", path, err)
	}
	return e, nil
}

// declare reads the module's declaration from a first instance.
func (e *Evaluator) declare(ctx context.Context) error {
	inst, err := e.instance(ctx)
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

// instance returns the live instance, making one if there is none.
// Called with e.mu held, or before e is shared.
func (e *Evaluator) instance(ctx context.Context) (api.Module, error) {
	if e.inst != nil {
		return e.inst, nil
	}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	inst, err := e.rt.InstantiateModule(ctx, e.mod, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	e.inst = inst
	return inst, nil
}

// discard drops the instance after a trap.
func (e *Evaluator) discard(ctx context.Context) {
	if e.inst != nil {
		e.inst.Close(ctx)
		e.inst = nil
	}
}

// Close releases the runtime.
func (e *Evaluator) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inst = nil
	return e.rt.Close(context.Background())
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
// enough says so, returning the times and the last checksum. A failure of
// the kernel is a status and a note; the error is for ctx.
func (e *Evaluator) measure(ctx context.Context, sp *genome.Space, c genome.Config, p evaluate.Problem, warmup int, enough func([]float64) bool) ([]float64, float64, evaluate.Status, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	deadline := time.Now().Add(e.opt.Timeout)
	inst, err := e.instance(ctx)
	if err != nil {
		return nil, 0, evaluate.StatusRuntime, err.Error(), nil
	}
	trap := func(what string, err error) ([]float64, float64, evaluate.Status, string, error) {
		e.discard(ctx)
		if ctx.Err() != nil {
			return nil, 0, "", "", ctx.Err()
		}
		return nil, 0, evaluate.StatusRuntime, fmt.Sprintf("%s trapped: %v; instance discarded", what, err), nil
	}
	in := inputs(sp, c, p)
	res, err := inst.ExportedFunction("quasim_buffer").Call(ctx, uint64(len(in)))
	if err != nil {
		return trap("quasim_buffer", err)
	}
	mem := inst.Memory()
	for i, v := range in {
		if !mem.WriteUint64Le(uint32(res[0])+uint32(8*i), v) {
			e.discard(ctx)
			return nil, 0, evaluate.StatusRuntime, "quasim_buffer returned an address outside memory", nil
		}
	}
	res, err = inst.ExportedFunction("quasim_setup").Call(ctx, uint64(sp.Len()), uint64(len(p.Dims)))
	if err != nil {
		return trap("quasim_setup", err)
	}
	switch code := int32(res[0]); code {
	case 0:
	case 1:
		return nil, 0, evaluate.StatusInvalid, "quasim_setup: the config cannot run", nil
	default:
		return nil, 0, evaluate.StatusRuntime, fmt.Sprintf("quasim_setup returned %d", code), nil
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
			return trap("quasim_run", err)
		}
		if code := int32(res[0]); code != 0 {
			return nil, 0, evaluate.StatusRuntime, fmt.Sprintf("quasim_run returned %d", code), nil
		}
		if i >= warmup {
			times = append(times, float64(dt.Nanoseconds())/1e6)
		}
	}
	res, err = inst.ExportedFunction("quasim_checksum").Call(ctx)
	if err != nil {
		return trap("quasim_checksum", err)
	}
	return times, api.DecodeF64(res[0]), evaluate.StatusOK, "", nil
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
// timed runs; the module reports no outputs, so the error bound is noted
// as not available.
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
		ErrorBound:  evaluate.ErrorBoundResult{Formula: "none: a wasm kernel reports a checksum, not its outputs", Passed: true},
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
	var sums, times []float64
	reps := max(1, s.LatencySamples/s.Repeats)
	for range s.Repeats {
		t, sum, status, note, err := e.measure(ctx, sp, c, p, 0, count(reps))
		if err != nil {
			return rep, err
		}
		if status != evaluate.StatusOK {
			rep.Parity.Worst = fmt.Sprintf("verify run: %s: %s", status, note)
			return rep, nil
		}
		sums, times = append(sums, sum), append(times, t...)
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
	rep.Latency = evaluate.LatencyStats(times, s.Seed)
	rep.CostS = time.Since(start).Seconds()
	return rep, nil
}

// count is a measurement of n timed runs.
func count(n int) func([]float64) bool {
	return func(t []float64) bool { return len(t) >= n }
}
