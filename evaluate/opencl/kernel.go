package opencl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/genome"
)

// Kernel describes one OpenCL kernel to tune, as its author hands it to a
// tuner: sources, the kernel's name, tunable parameters defined before
// the source, the launch geometry and the arguments. It is what a spec's
// opencl section (or a FAIR T1 file's KernelSpecification) becomes, and
// what the worker process is started with (as JSON).
type Kernel struct {
	Name    string   `json:"name"`    // the spec's name, for messages
	Sources []string `json:"sources"` // absolute paths, compiled as one source in order
	Kernel  string   `json:"kernel"`  // the __kernel function's name
	Options []string `json:"options,omitempty"`
	// Params are the tunable parameters in order; every one is passed as
	// a define.
	Params      []Param  `json:"params"`
	Constraints []string `json:"constraints,omitempty"`
	// ProblemDims names the problem's dims for the expressions below.
	ProblemDims []string `json:"problem_dims,omitempty"`
	// BlockSizeNames name the parameters holding the work-group size in
	// x, y and z (default block_size_x, block_size_y, block_size_z), or
	// give it as a number; a name that is not a parameter gives 256 in x
	// and 1 in y and z, as Kernel Tuner does.
	BlockSizeNames []string `json:"block_size_names,omitempty"`
	// ProblemSize is the launch's problem in x (, y, z): expressions of
	// the problem dims and parameters. Its length is the launch's
	// dimension count.
	ProblemSize []string `json:"problem_size"`
	// GridDiv, per dim, are expressions whose product divides that dim of
	// ProblemSize: the number of work-groups is the quotient rounded up
	// (Kernel Tuner's grid_div_x/y/z). Nil for a dim means its block size
	// parameter; an empty list means 1.
	GridDiv [3][]string `json:"grid_div"`
	Args    []Arg       `json:"args"`
	Check   Check       `json:"check"`
	Device  Select      `json:"device,omitzero"`
	// CacheDir holds compiled program binaries (empty: no disk cache).
	CacheDir string `json:"cache_dir,omitempty"`
	// CompileAhead says how the worker compiles the configs it is told
	// come next while the device runs the current one: "thread" ("on")
	// on a thread of its own; "process" in helper processes that fill
	// pocl's kernel cache, stopped while the worker launches (pocl builds
	// under one lock per process); "off"; or "" (auto): a thread unless
	// the device is the CPU, helpers on pocl's CPU device with its cache
	// on and more than one core (once a build is slow: HelpersAfter),
	// else off.
	CompileAhead string `json:"compile_ahead,omitempty"`
	// Iterations bounds the timed runs of one measurement (Kernel Tuner's
	// iterations); zero: evaluate.Reps's default. The evaluator's caller
	// applies it (Options.Reps); the worker does not read it.
	Iterations int `json:"iterations,omitempty"`
	// HelpersAfter: under auto, helpers start only once one of the
	// worker's own builds (with the first launch, where pocl generates
	// the work-group code) took longer than this, the configs told
	// before then waiting for them; until then the worker builds each
	// config itself. Zero: as long as the worker took to start (its
	// device and the problems' buffers) and to build an empty kernel (the
	// compiler's start in the process), which is what each helper's
	// start costs too. An explicit "process" starts them at once.
	HelpersAfter time.Duration `json:"helpers_after,omitempty"`
	// PrepareTimeout bounds preparing each of Problems (the reference
	// run); a worker that cannot prepare one in time exits saying so.
	// Zero: 60 s.
	PrepareTimeout time.Duration `json:"prepare_timeout,omitempty"`
	// Problems are the problems the worker prepares (buffers and
	// reference output) before its hello, so that no run request's
	// timeout pays for them; others are prepared at their first run.
	Problems [][]int `json:"problems,omitempty"`
}

// Param is a tunable parameter as the harness protocol declares one: its
// values in order (neighbours are close), the first being the default
// unless Default says otherwise.
type Param = harness.Param

// Arg is one kernel argument: a buffer (Size set) or a scalar (Value set).
type Arg struct {
	Name string `json:"name"`
	Type string `json:"type"` // a key of Types
	// Size is the buffer's element count: an expression of the problem's
	// dims. Empty for a scalar.
	Size string `json:"size,omitempty"`
	// Value is a scalar's value: an expression of the problem's dims and
	// parameters. Empty for a buffer.
	Value string `json:"value,omitempty"`
	// Fill is how a buffer starts, before every verified run.
	Fill Fill `json:"fill,omitzero"`
	// Output marks a buffer the kernel writes: it is compared with the
	// reference's. A kernel with no output is tuned unchecked.
	Output bool `json:"output,omitempty"`
	// Data is a .npy file holding a buffer's initial content (Fill is
	// then unused): its dtype is the argument's type and its element
	// count the buffer's size.
	Data string `json:"data,omitempty"`
	// Answer is a .npy file holding an output's expected content: with
	// answers, every output is compared with its answer (Kernel Tuner's
	// answer) instead of a reference config's output.
	Answer string `json:"answer,omitempty"`
}

// Fill kinds.
const (
	FillZero     = "zero"
	FillRandom   = "random"   // uniform in [0, Value) (Value default 1) from Seed
	FillConstant = "constant" // every element Value
	FillRamp     = "ramp"     // element i is Start + i*Step
	FillUniform  = "uniform"  // uniform in [Start, Step) from Seed
	FillNormal   = "normal"   // normal of mean Start and deviation Step, from Seed
)

// Fill says how a buffer's elements are set.
type Fill struct {
	Kind  string  `json:"kind"`
	Seed  uint64  `json:"seed,omitempty"`
	Value float64 `json:"value,omitempty"`
	Start float64 `json:"start,omitempty"`
	Step  float64 `json:"step,omitempty"`
}

// Check says what a config's output is compared with, and how closely.
type Check struct {
	// Reference is a config of this kernel (param name to value) whose
	// output is the reference; nil with no ReferenceSource means the
	// default config.
	Reference map[string]any `json:"reference,omitempty"`
	// ReferenceSources and ReferenceKernel name another kernel, with the
	// same arguments, launched over the problem size with work-groups
	// the driver chooses, whose output is the reference.
	ReferenceSources []string `json:"reference_sources,omitempty"`
	ReferenceKernel  string   `json:"reference_kernel,omitempty"`
	// Abs and Rel are the tolerance: an element passes when
	// |got-want| <= Abs, or <= Rel*max(|want|, mean |want| of its
	// buffer). Both zero means exact.
	Abs float64 `json:"abs,omitempty"`
	Rel float64 `json:"rel,omitempty"`
	// Sum compares each output's sum instead of its elements, under the
	// same tolerance (want: the reference's sum, its mean magnitude the
	// sum of magnitudes): for partial results whose layout depends on
	// the config, such as a reduction's per-work-group sums (Kernel
	// Tuner's reduction example checks so).
	Sum bool `json:"sum,omitempty"`
	// AllClose is numpy.allclose's rule, as Kernel Tuner checks an
	// answer: an element passes when |got-want| <= Abs + Rel*|want|.
	AllClose bool `json:"allclose,omitempty"`
	// Verify is a Unix socket whose listener judges each config's outputs
	// (Kernel Tuner's verify function, served by quasim's Python
	// package): the worker sends the config and its outputs as .npy
	// files, and takes its verdict.
	Verify string `json:"verify,omitempty"`
}

// Select picks the device: the first whose platform and device names
// contain Platform and Device (case-insensitive), the Index-th of those;
// by default the first GPU, else the first device.
type Select struct {
	Platform string `json:"platform,omitempty"`
	Device   string `json:"device,omitempty"`
	Index    int    `json:"index,omitempty"`
}

// Type is an element type of an argument.
type Type struct {
	Size  int
	Float bool
	Sign  bool
}

// Types are the argument types, by their OpenCL C names and aliases.
var Types = map[string]Type{
	"float": {4, true, true}, "double": {8, true, true},
	"char": {1, false, true}, "uchar": {1, false, false},
	"short": {2, false, true}, "ushort": {2, false, false},
	"int": {4, false, true}, "uint": {4, false, false},
	"long": {8, false, true}, "ulong": {8, false, false},
	"int8": {1, false, true}, "uint8": {1, false, false},
	"int16": {2, false, true}, "uint16": {2, false, false},
	"int32": {4, false, true}, "uint32": {4, false, false},
	"int64": {8, false, true}, "uint64": {8, false, false},
	"float32": {4, true, true}, "float64": {8, true, true},
}

// TypeNames lists Types' keys, sorted.
func TypeNames() []string {
	var out []string
	for k := range Types {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// DefaultBlockSizeNames are Kernel Tuner's.
var DefaultBlockSizeNames = []string{"block_size_x", "block_size_y", "block_size_z"}

// FieldError is a problem with one field of a Kernel; Field is named as
// in a spec's opencl section (args[2].size).
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func ferr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// ErrNoKernel is the error of a source that defines no kernel of the
// name asked for.
var ErrNoKernel = errors.New("no kernel of that name in the source")

// Geometry is a compiled Kernel's launch rules: expressions resolved
// against the parameters and the problem's dims.
type Geometry struct {
	k       *Kernel
	names   []string // params, then problem dims: the expressions' slots
	block   [3]int   // param index of each block size, or -1
	fixed   [3]int   // a block size given as a number (block < 0), or 0
	problem []*genome.Expr
	div     [3][]*genome.Expr
	sizes   []*genome.Expr // per arg: size or value
}

// Compile checks k and compiles its expressions. Errors are *FieldError.
func (k *Kernel) Compile() (*Geometry, error) {
	if len(k.Sources) == 0 {
		return nil, ferr("source", "no source file")
	}
	if !genome.IsName(k.Kernel) {
		return nil, ferr("kernel", "%q is not a kernel name", k.Kernel)
	}
	if len(k.Params) == 0 {
		return nil, ferr("tune_params", "no tunable parameters")
	}
	g := &Geometry{k: k}
	for i, p := range k.Params {
		if !genome.IsName(p.Name) {
			return nil, ferr(fmt.Sprintf("tune_params[%d]", i), "%q is not a name", p.Name)
		}
		if slices.Contains(g.names, p.Name) {
			return nil, ferr("tune_params."+p.Name, "listed twice")
		}
		if len(p.Values) == 0 {
			return nil, ferr("tune_params."+p.Name, "no values")
		}
		g.names = append(g.names, p.Name)
	}
	for i, d := range k.ProblemDims {
		if slices.Contains(g.names, d) {
			return nil, ferr(fmt.Sprintf("problem_dims[%d]", i), "%q is also a tunable parameter", d)
		}
		g.names = append(g.names, d)
	}
	bs := k.BlockSizeNames
	if len(bs) == 0 {
		bs = DefaultBlockSizeNames
	}
	if len(bs) > 3 {
		return nil, ferr("block_size_names", "%d names, at most 3", len(bs))
	}
	for i := range 3 {
		g.block[i] = -1
		if i < len(bs) {
			g.block[i] = slices.Index(g.names[:len(k.Params)], bs[i])
			if n, err := strconv.Atoi(bs[i]); err == nil && n > 0 {
				g.fixed[i] = n
			}
		}
	}
	if len(k.ProblemSize) == 0 || len(k.ProblemSize) > 3 {
		return nil, ferr("problem_size", "%d dims, want 1 to 3", len(k.ProblemSize))
	}
	for i, src := range k.ProblemSize {
		e, err := g.compile(src)
		if err != nil {
			return nil, ferr(fmt.Sprintf("problem_size[%d]", i), "%w", err)
		}
		g.problem = append(g.problem, e)
	}
	axes := "xyz"
	for d := range 3 {
		divs := k.GridDiv[d]
		if divs == nil {
			if g.block[d] >= 0 {
				divs = []string{k.Params[g.block[d]].Name}
			}
		}
		for j, src := range divs {
			e, err := g.compile(src)
			if err != nil {
				return nil, ferr(fmt.Sprintf("grid_div_%c[%d]", axes[d], j), "%w", err)
			}
			g.div[d] = append(g.div[d], e)
		}
	}
	if len(k.Args) == 0 {
		return nil, ferr("args", "no arguments")
	}
	outputs, answers := 0, 0
	for i, a := range k.Args {
		f := fmt.Sprintf("args[%d]", i)
		if _, ok := Types[a.Type]; !ok {
			return nil, ferr(f+".type", "%q: unknown type (want one of %s)", a.Type, strings.Join(TypeNames(), ", "))
		}
		switch {
		case a.Size != "" && a.Value != "":
			return nil, ferr(f, "both size (a buffer) and value (a scalar)")
		case a.Size == "" && a.Value == "":
			return nil, ferr(f, "neither size (a buffer) nor value (a scalar)")
		case a.Size != "":
			// A buffer's size depends on the problem only, so every config
			// sees the same buffers and compares with the same reference.
			e, err := genome.Compile(a.Size, g.resolveIn(g.names[len(k.Params):], len(k.Params)))
			if err != nil {
				return nil, ferr(f+".size", "%w", err)
			}
			g.sizes = append(g.sizes, e)
			if err := checkFill(a.Fill); err != nil {
				return nil, ferr(f+".fill", "%w", err)
			}
			if a.Output {
				outputs++
			}
			if a.Answer != "" {
				if !a.Output {
					return nil, ferr(f+".answer", "given for an argument that is not an output")
				}
				answers++
			}
		default:
			if a.Output {
				return nil, ferr(f+".output", "a scalar cannot be an output")
			}
			if a.Data != "" || a.Answer != "" {
				return nil, ferr(f, "a scalar takes its value, not data or answer files")
			}
			e, err := g.compile(a.Value)
			if err != nil {
				return nil, ferr(f+".value", "%w", err)
			}
			g.sizes = append(g.sizes, e)
		}
	}
	if answers > 0 && answers < outputs {
		return nil, ferr("args", "%d outputs, %d with an answer: give every output its answer, or none", outputs, answers)
	}
	if answers > 0 && (k.Check.Reference != nil || k.Check.ReferenceKernel != "") {
		return nil, ferr("check", "a reference and answers both given")
	}
	if k.Check.Verify != "" && (answers > 0 || k.Check.Reference != nil || k.Check.ReferenceKernel != "") {
		return nil, ferr("check.verify", "a verify socket judges outputs alone: no reference or answers beside it")
	}
	if (len(k.Check.ReferenceSources) == 0) != (k.Check.ReferenceKernel == "") {
		return nil, ferr("check", "reference_source and reference_kernel go together")
	}
	if k.Check.Reference != nil && k.Check.ReferenceKernel != "" {
		return nil, ferr("check", "reference (a config) and reference_kernel both given")
	}
	for name := range k.Check.Reference {
		if !slices.Contains(g.names[:len(k.Params)], name) {
			return nil, ferr("check.reference."+name, "not a tunable parameter")
		}
	}
	switch k.CompileAhead {
	case "", "auto", "on", "thread", "process", "off":
	default:
		return nil, ferr("compile_ahead", "%q: want auto, thread, process or off", k.CompileAhead)
	}
	if k.HelpersAfter < 0 {
		return nil, ferr("helpers_after", "%v: negative", k.HelpersAfter)
	}
	if k.Check.Abs < 0 || k.Check.Rel < 0 || math.IsNaN(k.Check.Abs) || math.IsNaN(k.Check.Rel) {
		return nil, ferr("check.tolerance", "negative or NaN")
	}
	return g, nil
}

func checkFill(f Fill) error {
	switch f.Kind {
	case "", FillZero, FillRandom, FillConstant, FillRamp, FillUniform, FillNormal:
		return nil
	}
	return fmt.Errorf("%q: want zero, random, constant, ramp, uniform or normal", f.Kind)
}

func (g *Geometry) resolveIn(names []string, offset int) func(string) (int, bool) {
	return func(name string) (int, bool) {
		i := slices.Index(names, name)
		return offset + i, i >= 0
	}
}

func (g *Geometry) compile(src string) (*genome.Expr, error) {
	return genome.Compile(src, g.resolveIn(g.names, 0))
}

// env is the expressions' variables: the config's values, then the dims.
func (g *Geometry) env(cfg []genome.Value, dims []int) ([]genome.Value, error) {
	if len(cfg) != len(g.k.Params) {
		return nil, fmt.Errorf("config has %d values, the kernel %d parameters", len(cfg), len(g.k.Params))
	}
	env := slices.Clone(cfg)
	if len(g.k.ProblemDims) == 0 {
		return env, nil // unnamed dims: the expressions cannot name them
	}
	if len(dims) != len(g.k.ProblemDims) {
		return nil, fmt.Errorf("problem has %d dims, the kernel names %d (problem_dims)", len(dims), len(g.k.ProblemDims))
	}
	for _, d := range dims {
		env = append(env, genome.Int(int64(d)))
	}
	return env, nil
}

func evalInt(e *genome.Expr, env []genome.Value) (int64, error) {
	v, err := e.Eval(env)
	if err != nil {
		return 0, err
	}
	n, err := intOf(v)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", e.String(), err)
	}
	return n, nil
}

// intOf is v as an integer: an int, a bool, or a float with no fraction.
func intOf(v genome.Value) (int64, error) {
	switch v.Kind {
	case genome.KindInt, genome.KindBool:
		return v.I, nil
	case genome.KindFloat:
		if v.F == math.Trunc(v.F) && math.Abs(v.F) < 1<<62 {
			return int64(v.F), nil
		}
	}
	return 0, fmt.Errorf("%s is not an integer", v.String())
}

// Launch is the work-group and global sizes of one config.
type Launch struct {
	Local  []int
	Global []int
	Groups []int
}

// Launch computes config cfg's launch at problem dims: per dim, the block
// size, the number of work-groups ceil(problem / product(grid_div)), and
// the global size groups * block.
func (g *Geometry) Launch(cfg []genome.Value, dims []int) (Launch, error) {
	env, err := g.env(cfg, dims)
	if err != nil {
		return Launch{}, err
	}
	var l Launch
	for d := range g.problem {
		n, err := evalInt(g.problem[d], env)
		if err != nil {
			return Launch{}, fmt.Errorf("problem_size[%d]: %w", d, err)
		}
		if n <= 0 {
			return Launch{}, fmt.Errorf("problem_size[%d] = %d", d, n)
		}
		block := int64(1)
		switch {
		case g.block[d] >= 0:
			v, err := intOf(cfg[g.block[d]])
			if err != nil {
				return Launch{}, fmt.Errorf("block size %s: %w", g.k.Params[g.block[d]].Name, err)
			}
			block = v
		case g.fixed[d] > 0:
			block = int64(g.fixed[d])
		case d == 0:
			block = 256
		}
		div := int64(1)
		for j, e := range g.div[d] {
			v, err := evalInt(e, env)
			if err != nil {
				return Launch{}, fmt.Errorf("grid_div_%c[%d]: %w", "xyz"[d], j, err)
			}
			if v <= 0 {
				return Launch{}, fmt.Errorf("grid_div_%c[%d] = %d", "xyz"[d], j, v)
			}
			div *= v
		}
		if block <= 0 {
			return Launch{}, fmt.Errorf("block size %d in %c", block, "xyz"[d])
		}
		groups := (n + div - 1) / div
		l.Local = append(l.Local, int(block))
		l.Groups = append(l.Groups, int(groups))
		l.Global = append(l.Global, int(groups*block))
	}
	return l, nil
}

// BufferLen is the element count of buffer argument i at problem dims.
func (g *Geometry) BufferLen(i int, dims []int) (int64, error) {
	env := make([]genome.Value, len(g.k.Params), len(g.k.Params)+len(dims))
	for i, d := range dims {
		if i < len(g.k.ProblemDims) {
			env = append(env, genome.Int(int64(d)))
		}
	}
	n, err := evalInt(g.sizes[i], env)
	if err != nil {
		return 0, fmt.Errorf("args[%d] (%s).size: %w", i, g.k.Args[i].Name, err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("args[%d] (%s).size = %d", i, g.k.Args[i].Name, n)
	}
	return n, nil
}

// ScalarValue is scalar argument i's value for config cfg at dims.
func (g *Geometry) ScalarValue(i int, cfg []genome.Value, dims []int) (genome.Value, error) {
	env, err := g.env(cfg, dims)
	if err != nil {
		return genome.Value{}, err
	}
	v, err := g.sizes[i].Eval(env)
	if err != nil {
		return genome.Value{}, fmt.Errorf("args[%d] (%s).value: %w", i, g.k.Args[i].Name, err)
	}
	return v, nil
}

// Unchecked reports whether no output is compared: the kernel marks none.
func (k *Kernel) Unchecked() bool {
	return !slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Output })
}

// Answers reports whether outputs are compared with answer files.
func (k *Kernel) Answers() bool {
	return slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Answer != "" })
}

// Prefix is the source's first lines for config cfg launched as l, as
// Kernel Tuner writes them: #define lines for grid_size_x/y/z (work-groups
// per dim), the block sizes (block_size_x/y/z or block_size_names), every
// parameter in order, kernel_tuner, then #line 1. Defines in the source,
// not -D options, so that a parameter may be named as an OpenCL C
// qualifier (read_only): a -D define reaches the compiler's own headers.
func (g *Geometry) Prefix(cfg []genome.Value, l Launch) string {
	var names []string
	vals := map[string]string{}
	set := func(name, v string) {
		if _, ok := vals[name]; !ok {
			names = append(names, name)
		}
		vals[name] = v
	}
	bs := g.k.BlockSizeNames
	if len(bs) == 0 {
		bs = DefaultBlockSizeNames
	}
	for d, name := range []string{"grid_size_x", "grid_size_y", "grid_size_z"} {
		set(name, strconv.Itoa(dimOf(l.Groups, d)))
	}
	for d := range 3 {
		if d < len(bs) && genome.IsName(bs[d]) {
			set(bs[d], strconv.Itoa(dimOf(l.Local, d)))
		}
	}
	for i, p := range g.k.Params {
		set(p.Name, define(cfg[i]))
	}
	set("kernel_tuner", "1")
	var b strings.Builder
	for _, n := range names {
		b.WriteString("#define " + n + " " + vals[n] + "\n")
	}
	b.WriteString("#line 1\n")
	return b.String()
}

func dimOf(xs []int, d int) int {
	if d < len(xs) {
		return xs[d]
	}
	return 1
}

// Options are the compiler options of every config: the kernel's own.
func (g *Geometry) Options() string { return strings.Join(g.k.Options, " ") }

// define writes a value as a define's text, as the runtimes' helpers
// write a served config's (runtime/c quasim_defines, the Python client's
// defines): a number as JSON writes it, a bool as 0 or 1, a string as
// written (a token such as a type name).
func define(v genome.Value) string {
	switch v.Kind {
	case genome.KindBool:
		return fmt.Sprint(v.I)
	case genome.KindFloat:
		b, err := json.Marshal(v.F)
		if err != nil { // NaN or Inf: no define can hold them anyway
			return genome.PyFloat(v.F)
		}
		return string(b)
	}
	return v.String()
}

// Limits are constraints that keep configs whose work-group the device
// cannot take out of the space (Kernel Tuner leaves them out too), so
// that none is spent as an invalid evaluation: per dim, its block size
// parameter within the device's work-items in that dim, and their
// product within its work-group size. A kernel's own lower limit (its
// registers, local memory) is known only once built: those configs stay
// invalid trials.
func (g *Geometry) Limits(d Device) []string {
	var out, prod []string
	for dim := range 3 {
		if g.block[dim] < 0 {
			continue
		}
		name := g.k.Params[g.block[dim]].Name
		prod = append(prod, name)
		if dim < len(d.MaxWorkItems) && d.MaxWorkItems[dim] > 0 {
			out = append(out, fmt.Sprintf("%s <= %d", name, d.MaxWorkItems[dim]))
		}
	}
	if len(prod) > 0 && d.MaxWorkGroup > 0 {
		out = append(out, fmt.Sprintf("%s <= %d", strings.Join(prod, " * "), d.MaxWorkGroup))
	}
	return out
}
