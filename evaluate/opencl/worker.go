package opencl

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/cl"
)

// WorkerMode is the first argument that makes quasimd an OpenCL worker.
const WorkerMode = "opencl-worker"

// WorkerMain runs the worker: with --list it prints the devices (Devices,
// JSON) and exits; with --kernel JSON it speaks the exec harness protocol
// (docs/kernel-authors/harness-protocol.md) on stdin and stdout for that kernel. It
// returns the process's exit code.
func WorkerMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(WorkerMode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("list", false, "print the OpenCL devices as JSON and exit")
	kernel := fs.String("kernel", "", "the kernel to measure, as JSON (opencl.Kernel)")
	helper := fs.Bool("helper", false, "be a compile helper of a worker (helpers.go)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		var out Devices
		if _, all, err := listDevices(); err != nil {
			out.Unavailable = err.Error()
		} else {
			for _, d := range all {
				out.Devices = append(out.Devices, fromCL(d))
			}
		}
		json.NewEncoder(stdout).Encode(out)
		return 0
	}
	var k Kernel
	if err := json.Unmarshal([]byte(*kernel), &k); err != nil {
		fmt.Fprintf(stderr, "%s: --kernel: %v\n", WorkerMode, err)
		return 2
	}
	if *helper {
		if err := helperMain(&k, stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "%s --helper: %s: %v\n", WorkerMode, k.Name, err)
			return 1
		}
		return 0
	}
	start := time.Now()
	w, err := newWorker(&k)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", WorkerMode, k.Name, err)
		return 1
	}
	w.setup, w.log = time.Since(start), stderr
	compilerStarted := func() {}
	switch aheadMode(&k, w.dev) {
	case "process":
		if w.helpers, err = newHelpers(&k, stderr); err != nil {
			fmt.Fprintf(stderr, "%s: %s: compile helpers: %v\n", WorkerMode, k.Name, err)
		} else {
			defer w.helpers.close()
			// Under auto, helpers wait for a build that costs more than
			// starting one (startHelpers).
			if w.gated = k.CompileAhead != "process"; w.gated && k.HelpersAfter == 0 {
				// Timed beside the problems' preparing (the arguments
				// read and written), which needs no compiler: the first
				// build pays pocl's start either way, this way while the
				// data is read.
				started := make(chan time.Duration, 1)
				go func() { started <- w.startCompiler() }()
				compilerStarted = func() { w.compilerStart = <-started }
			}
		}
	case "thread":
		if k.CompileAhead == "process" {
			fmt.Fprintf(stderr, "%s: %s: compile_ahead process needs pocl's CPU device with its kernel cache on, on Linux; building ahead on a thread instead\n", WorkerMode, k.Name)
		}
		w.ahead = newCompiler(func(_, prefix, _ string) (*program, error) { return w.buildPrefixed(prefix) })
	}
	if err := w.prepareProblems(stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", WorkerMode, k.Name, err)
		return 1
	}
	compilerStarted()
	if err := w.serve(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", WorkerMode, k.Name, err)
		return 1
	}
	return 0
}

// worker holds one kernel's OpenCL state in the worker process.
type worker struct {
	k      *Kernel
	geom   *Geometry
	params []genome.Param
	src    string
	ctx    *cl.Context
	dev    Device

	progs   map[string]*program // by build options
	order   []string            // build options, least recently used first
	ahead   *compiler           // compiles prepared configs; nil when off
	helpers *helpers            // or helper processes do; nil when not
	// gated: the helpers wait until a build of the worker's own took
	// longer than helpersAfter(); the configs told until then are waiting.
	gated         bool
	waiting       []helperJob
	setup         time.Duration // from the worker's start to its device and the problems' buffers
	compilerStart time.Duration // an empty kernel's build, the worker's first (startCompiler)
	log           io.Writer     // the worker's stderr
	problems      map[string]*problemState
	checked       map[string]string // problem|config key -> "" (passed) or the mismatch
	// readOnly: the kernel declares the argument a pointer to const (or
	// __constant) data, so its runs leave the buffer as written.
	readOnly []bool
}

// maxPrograms bounds the built programs a worker keeps.
const maxPrograms = 32

type program struct {
	p *cl.Program
	k *cl.Kernel
}

// problemState is one problem's buffers and reference output.
type problemState struct {
	dims    []int
	bufs    []*cl.Buffer // nil for scalars
	init    [][]byte     // each buffer's initial content
	ref     [][]byte     // each output's reference content (nil for others)
	clean   []bool       // the buffer holds its initial content (reset)
	refErr  error        // why there is no reference
	refDone bool         // ref and refErr are set (helpers make none)
}

func newWorker(k *Kernel) (*worker, error) {
	g, err := k.Compile()
	if err != nil {
		return nil, err
	}
	params, err := genomeParams(k.Params)
	if err != nil {
		return nil, err
	}
	src, err := readSources(k.Sources)
	if err != nil {
		return nil, err
	}
	if !DefinesKernel(src, k.Kernel) {
		return nil, ferr("kernel", "%q: %w %s", k.Kernel, ErrNoKernel, strings.Join(k.Sources, ", "))
	}
	lib, all, err := listDevices()
	if err != nil {
		return nil, err
	}
	d, err := pick(all, k.Device)
	if err != nil {
		return nil, err
	}
	ctx, err := lib.NewContext(d)
	if err != nil {
		return nil, err
	}
	w := &worker{
		k: k, geom: g, params: params, src: src, ctx: ctx, dev: fromCL(d),
		progs: map[string]*program{}, problems: map[string]*problemState{}, checked: map[string]string{}, log: io.Discard,
		readOnly: make([]bool, len(k.Args)),
	}
	if decls, ok := KernelParams(src, k.Kernel); ok && len(decls) == len(k.Args) {
		for i, d := range decls {
			w.readOnly[i] = ConstPointee(d)
		}
	}
	return w, nil
}

// genomeParams turns the kernel's parameters into genome parameters.
func genomeParams(ps []Param) ([]genome.Param, error) {
	out := make([]genome.Param, len(ps))
	for i, p := range ps {
		gp := genome.Param{Name: p.Name}
		for j, v := range p.Values {
			gv, err := genome.ValueOf(v)
			if err != nil {
				return nil, ferr(fmt.Sprintf("tune_params.%s[%d]", p.Name, j), "%w", err)
			}
			if j == 0 {
				gp.Kind = gv.Kind
			}
			gp.Values = append(gp.Values, gv)
		}
		if p.Default != nil {
			k, err := valueIndex(gp, p.Default)
			if err != nil {
				return nil, ferr("default."+p.Name, "%w", err)
			}
			gp.Default = k
		}
		out[i] = gp
	}
	return out, nil
}

// valueIndex finds a (JSON-decoded) value among p's values, by number for
// numbers: JSON does not keep 2.0 apart from 2.
func valueIndex(p genome.Param, a any) (int, error) {
	v, err := genome.ValueOf(a)
	if err != nil {
		return 0, err
	}
	for i, w := range p.Values {
		x, okx := v.Float64()
		y, oky := w.Float64()
		if (okx && oky && x == y) || (!okx && !oky && v.String() == w.String()) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%v is not among the values of %s", a, p.Name)
}

func readSources(paths []string) (string, error) {
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// hello is the worker's first line.
func (w *worker) hello() harness.Hello {
	return harness.Hello{Type: "hello", Protocol: harness.Protocol, Name: w.k.Name, Version: "opencl", Device: w.dev.Class,
		Params: w.k.Params, Constraints: append(slices.Clip(w.k.Constraints), w.geom.Limits(w.dev)...)}
}

// prepareRequest tells the worker the configs that come next; it is not
// answered.
type prepareRequest struct {
	Type    string           `json:"type"`
	Configs []map[string]any `json:"configs"`
	Problem []int            `json:"problem,omitempty"`
}

// request is a line from quasimd: a run, a prepare or a shutdown.
type request struct {
	harness.RunRequest
	Configs []map[string]any `json:"configs"` // a prepare's
}

// prepareProblems prepares the kernel's problems before the hello, each
// within the prepare timeout: a reference that crashes the worker, never
// returns or fails to run is said on stderr (which quasimd quotes) and
// the worker exits, so the kernel fails to load saying why, rather than
// every config failing its check against nothing. Buffer errors are kept
// and answered to the runs.
func (w *worker) prepareProblems(stderr io.Writer) error {
	limit := w.k.PrepareTimeout
	if limit <= 0 {
		limit = 60 * time.Second
	}
	for _, dims := range w.k.Problems {
		fmt.Fprintf(stderr, "%s: %s: preparing problem %v (buffers and the reference output)\n", WorkerMode, w.k.Name, dims)
		done := make(chan *problemState, 1)
		var buffered time.Duration
		go func() {
			t := time.Now()
			if _, err := w.buffers(dims); err == nil {
				buffered = time.Since(t)
			}
			ps, _ := w.problem(dims)
			done <- ps
		}()
		select {
		case ps := <-done:
			w.setup += buffered
			if ps != nil && ps.refErr != nil {
				return fmt.Errorf("problem %v: the reference (%s) did not run: %v", dims, w.referenceName(), ps.refErr)
			}
		case <-time.After(limit):
			return fmt.Errorf("the reference output of problem %v did not come within %s", dims, limit)
		}
	}
	return nil
}

func (w *worker) serve(r io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	if err := enc.Encode(w.hello()); err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("request %q: %w", sc.Text(), err)
		}
		switch req.Type {
		case "shutdown":
			return nil
		case "prepare":
			w.prepare(req.Configs, req.Problem)
		case "run":
			if err := enc.Encode(w.run(req)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("request type %q: this worker answers run and shutdown", req.Type)
		}
	}
	return sc.Err()
}

// fail is a result with an error class.
func fail(id int, class evaluate.Status, format string, args ...any) harness.Result {
	return harness.Result{Type: "result", ID: id, ErrorClass: string(class), Error: fmt.Sprintf(format, args...)}
}

// run answers one run request.
func (w *worker) run(req request) harness.Result {
	start := time.Now()
	if w.helpers != nil {
		w.helpers.resume()
		defer w.helpers.pause()
	}
	cfg, key, err := w.config(req.Config)
	if err != nil {
		return fail(req.ID, evaluate.StatusInvalid, "%v", err)
	}
	ps, err := w.problem(req.Problem)
	if err != nil {
		return fail(req.ID, evaluate.StatusRuntime, "problem %v: %v", req.Problem, err)
	}
	if ps.refErr != nil {
		return fail(req.ID, evaluate.StatusRuntime, "no reference output to check against: %v", ps.refErr)
	}
	launch, err := w.geom.Launch(cfg, req.Problem)
	if err != nil {
		return fail(req.ID, evaluate.StatusInvalid, "launch: %v", err)
	}
	compileStart := time.Now()
	prog, compiled, err := w.program(w.geom.Prefix(cfg, launch))
	compileMS := ms(time.Since(compileStart))
	if err != nil {
		res := fail(req.ID, evaluate.StatusCompile, "%v", err)
		res.PhasesMS = map[string]float64{"compilation": compileMS}
		return res
	}
	if !compiled {
		compileMS = 0
	}
	if err := w.fits(prog.k, launch); err != nil {
		return fail(req.ID, evaluate.StatusInvalid, "%v", err)
	}
	if err := w.setArgs(prog.k, ps, cfg); err != nil {
		return fail(req.ID, evaluate.StatusRuntime, "%v", err)
	}
	// Every request starts from the buffers' initial content, so the
	// first run's output is checked and a verify run's checksum is the
	// same each time.
	if err := w.reset(ps); err != nil {
		return fail(req.ID, evaluate.StatusRuntime, "%v", err)
	}
	reps := max(req.Repetitions, 1)
	var times []float64
	if w.helpers != nil {
		w.helpers.pause() // until the next request's build; see helpers.go
	}
	first, err := w.ctx.Run(prog.k, launch.Global, launch.Local)
	if err != nil {
		return fail(req.ID, runStatus(err), "launch %v over %v: %v", launch.Local, launch.Global, err)
	}
	if build := time.Since(compileStart) - time.Duration(first); compiled && w.gated && build > w.helpersAfter() {
		fmt.Fprintf(w.log, "%s: %s: a build took %v, longer than %v, what starting a helper costs: compile helpers start\n",
			WorkerMode, w.k.Name, build.Round(time.Millisecond), w.helpersAfter().Round(time.Millisecond))
		w.startHelpers()
	}
	times = append(times, float64(first)/1e6)
	valStart := time.Now()
	outs, err := w.outputs(ps)
	if err != nil {
		return fail(req.ID, evaluate.StatusRuntime, "%v", err)
	}
	ck := fmt.Sprint(req.Problem) + "|" + key
	verdict, done := w.checked[ck]
	if !done {
		if w.k.Check.Verify != "" {
			verdict = w.verify(req.Config, outs)
		} else {
			verdict = w.compare(ps, outs)
		}
		w.checked[ck] = verdict
	}
	valMS := ms(time.Since(valStart))
	if verdict != "" {
		return fail(req.ID, evaluate.StatusWrongResult, "%s", verdict)
	}
	for len(times) < reps {
		ns, err := w.ctx.Run(prog.k, launch.Global, launch.Local)
		if err != nil {
			return fail(req.ID, runStatus(err), "launch %v over %v: %v", launch.Local, launch.Global, err)
		}
		times = append(times, float64(ns)/1e6)
	}
	var sum, bench float64
	for i, a := range w.k.Args {
		if a.Output {
			sum += checksum(outs[i], Types[a.Type])
		}
	}
	for _, t := range times {
		bench += t
	}
	wall := ms(time.Since(start))
	res := harness.Result{Type: "result", ID: req.ID, TimesMS: times, Checksum: &sum,
		PhasesMS: map[string]float64{"compilation": compileMS, "benchmark": bench, "validation": valMS,
			"framework": max(0, wall-compileMS-bench-valMS)}}
	if req.Verify {
		res.Parity = w.parity(ps, outs)
	}
	return res
}

// parity is the comparison of outs with ps's reference for a verify
// run's answer: what the reference was, the tolerance, and the worst
// element over every output.
func (w *worker) parity(ps *problemState, outs [][]byte) *harness.Parity {
	c := w.k.Check
	switch {
	case w.k.Unchecked():
		return &harness.Parity{NotChecked: "the kernel marks no output and has no answer: it is tuned without an output check"}
	case c.Verify != "":
		// The verify function accepted every output of this run (one it
		// rejects is answered wrong_result).
		n := 0
		for _, a := range w.k.Args {
			if a.Output {
				n++
			}
		}
		return &harness.Parity{Reference: "the verify function given to tune_kernel", Tolerance: "verify function",
			Worst: "every output accepted", Total: n}
	}
	p := &harness.Parity{Tolerance: toleranceKind(c), Abs: c.Abs, Rel: c.Rel, Reference: w.referenceName()}
	worstRatio := -1.0
	for i, a := range w.k.Args {
		if !a.Output {
			continue
		}
		st := measureErr(outs[i], ps.ref[i], Types[a.Type], c)
		p.MaxAbsErr, p.MaxRelErr = max(p.MaxAbsErr, st.maxAbs), max(p.MaxRelErr, st.maxRel)
		p.Bad += st.bad
		p.Total += st.total
		if st.total > 0 && st.worstRatio > worstRatio {
			worstRatio = st.worstRatio
			where := fmt.Sprintf("%s[%d]", a.Name, st.worst)
			if st.worst < 0 {
				where = "sum of " + a.Name
			}
			p.Worst = fmt.Sprintf("%s: got %s, want %s (abs err %.3g, %.3g of the tolerance)", where,
				genome.PyFloat(st.worstGot), genome.PyFloat(st.worstWant), math.Abs(st.worstGot-st.worstWant), st.worstRatio)
		}
	}
	return p
}

// referenceName says what the outputs are compared with.
func (w *worker) referenceName() string {
	if c := w.k.Check; c.ReferenceKernel != "" {
		return "the output of reference kernel " + c.ReferenceKernel
	}
	if w.k.Answers() {
		var files []string
		for _, a := range w.k.Args {
			if a.Output {
				files = append(files, a.Name+": "+filepath.Base(a.Answer))
			}
		}
		return "the answer given for each output (" + strings.Join(files, ", ") + ")"
	}
	cfg, err := w.referenceConfig()
	if err != nil {
		return "the reference config (" + err.Error() + ")"
	}
	keys := make([]string, len(cfg))
	for i, v := range cfg {
		keys[i] = v.String()
	}
	return "the output of the reference config " + strings.Join(keys, ",")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runStatus classifies a launch error: a launch the device refuses for
// its size is invalid (Kernel Tuner's too-many-resources class), the rest
// failed at run time.
func runStatus(err error) evaluate.Status {
	switch cl.Code(err) {
	case cl.InvalidWorkGroupSize, cl.InvalidWorkItemSize, cl.InvalidGlobalWorkSize, cl.OutOfResources:
		return evaluate.StatusInvalid
	}
	return evaluate.StatusRuntime
}

// config turns a request's config into values in parameter order.
func (w *worker) config(m map[string]any) ([]genome.Value, string, error) {
	if len(m) != len(w.params) {
		return nil, "", fmt.Errorf("config has %d values, the kernel %d parameters", len(m), len(w.params))
	}
	cfg := make([]genome.Value, len(w.params))
	keys := make([]string, len(w.params))
	for i, p := range w.params {
		a, ok := m[p.Name]
		if !ok {
			return nil, "", fmt.Errorf("config has no value for %s", p.Name)
		}
		j, err := valueIndex(p, a)
		if err != nil {
			return nil, "", err
		}
		cfg[i] = p.Values[j]
		keys[i] = p.Values[j].String()
	}
	return cfg, strings.Join(keys, ","), nil
}

// defaultConfig is the kernel's default config, with the check's
// reference values over it.
func (w *worker) referenceConfig() ([]genome.Value, error) {
	return referenceValues(w.params, w.k.Check.Reference)
}

// referenceValues is the config of params' defaults with the values of
// ref over them.
func referenceValues(params []genome.Param, ref map[string]any) ([]genome.Value, error) {
	cfg := make([]genome.Value, len(params))
	for i, p := range params {
		cfg[i] = p.Values[p.Default]
		if a, ok := ref[p.Name]; ok {
			j, err := valueIndex(p, a)
			if err != nil {
				return nil, ferr("check.reference."+p.Name, "%w", err)
			}
			cfg[i] = p.Values[j]
		}
	}
	return cfg, nil
}

// ReferenceKey is the canonical key of the config whose output every
// config's is compared with (check.reference over the parameters'
// defaults); "" when no config is the reference (a reference kernel,
// answers, a verify function, or no output checked).
func (k Kernel) ReferenceKey() (string, error) {
	if k.Check.ReferenceKernel != "" || k.Check.Verify != "" || k.Answers() || k.Unchecked() {
		return "", nil
	}
	// As the worker reads them: from the JSON it is started with.
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	var wk Kernel
	if err := json.Unmarshal(b, &wk); err != nil {
		return "", err
	}
	params, err := genomeParams(wk.Params)
	if err != nil {
		return "", err
	}
	cfg, err := referenceValues(params, wk.Check.Reference)
	if err != nil {
		return "", err
	}
	keys := make([]string, len(cfg))
	for i, v := range cfg {
		keys[i] = v.String()
	}
	return strings.Join(keys, ","), nil
}

// program builds (or finds) the program whose source starts with opts (a
// config's Prefix, its key everywhere a program is looked up); compiled
// says whether it was built now (not found in memory).
func (w *worker) program(opts string) (*program, bool, error) {
	if p, ok := w.progs[opts]; ok {
		w.order = append(slices.DeleteFunc(w.order, func(o string) bool { return o == opts }), opts)
		return p, false, nil
	}
	var p *program
	var err error
	if w.ahead != nil {
		p, err = w.ahead.take(opts) // waits for a compile in progress
	} else if w.helpers != nil {
		w.helpers.take(opts) // waits for a helper on it; the build below then finds pocl's cache
	}
	if p == nil && err == nil {
		p, err = w.buildPrefixed(opts)
	}
	if err != nil {
		return nil, true, err
	}
	if len(w.order) >= maxPrograms {
		old := w.order[0]
		w.order = w.order[1:]
		w.progs[old].k.Release()
		w.progs[old].p.Release()
		delete(w.progs, old)
	}
	w.progs[opts] = p
	w.order = append(w.order, opts)
	return p, true, nil
}

// prepare hands the configs that come next, on problem dims, to the
// compiler ahead or the helpers.
func (w *worker) prepare(cfgs []map[string]any, dims []int) {
	if w.ahead == nil && w.helpers == nil {
		return
	}
	var jobs []helperJob
	if dims == nil && len(w.k.Problems) > 0 {
		dims = w.k.Problems[0]
	}
	for _, m := range cfgs {
		cfg, _, err := w.config(m)
		if err != nil {
			continue
		}
		l, err := w.geom.Launch(cfg, dims)
		if err != nil {
			continue
		}
		if opts := w.geom.Prefix(cfg, l); w.progs[opts] == nil {
			jobs = append(jobs, helperJob{Opts: opts, Config: m, Problem: dims})
		}
	}
	if w.gated {
		w.waiting = jobs
		return
	}
	if w.helpers != nil {
		w.helpers.set(jobs)
		return
	}
	keep := map[string]bool{}
	for _, j := range jobs {
		keep[j.Opts] = true
	}
	for _, p := range w.ahead.drop(keep) {
		p.k.Release()
		p.p.Release()
	}
	for _, j := range jobs {
		w.ahead.add(j.Opts, "", w.k.Kernel)
	}
}

// helpersAfter is how long a build of the worker's own (with its first
// launch) must take for its helpers to start (Kernel.HelpersAfter): by
// default what a helper's start costs, the worker's own (setup) and its
// compiler's (compilerStart).
func (w *worker) helpersAfter() time.Duration {
	if w.k.HelpersAfter > 0 {
		return w.k.HelpersAfter
	}
	return w.setup + w.compilerStart
}

// startCompiler builds an empty kernel and returns how long that took:
// what the compiler's start in a process costs (pocl's first build of
// vector_add took 2.4 s here at load 16, the next ones 0.1 to 0.7 s), paid
// once here instead of by the first config's build.
func (w *worker) startCompiler() time.Duration {
	t := time.Now()
	// Its own source, or pocl's kernel cache (shared with the worker
	// that started this one) would answer without starting the compiler.
	src := fmt.Sprintf("__kernel void quasim_compiler_start(void) {} // %d %d\n", os.Getpid(), t.UnixNano())
	if p, err := w.ctx.BuildSource(src, w.geom.Options()); err == nil {
		p.Release()
	}
	return time.Since(t)
}

// startHelpers ends the helpers' wait and hands them the configs told so
// far that the worker has not built. A helper costs a start like the
// worker's own (its device, a copy of the problems' buffers read again
// from their files, the compiler's start) and a launch of each config it
// builds: for a kernel that builds faster than that (vector_add over 10
// million floats: 40 MB an argument) they cost more than they save.
func (w *worker) startHelpers() {
	w.gated = false
	jobs := slices.DeleteFunc(w.waiting, func(j helperJob) bool { return w.progs[j.Opts] != nil })
	w.waiting = nil
	if len(jobs) > 0 {
		w.helpers.set(jobs)
	}
}

// buildPrefixed builds the kernel's source after prefix, with its options.
func (w *worker) buildPrefixed(prefix string) (*program, error) {
	p, err := w.build(prefix+w.src, w.geom.Options(), w.k.Kernel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", defineList(prefix), err)
	}
	return p, nil
}

// defineList is a prefix's defines as name=value, for messages.
func defineList(prefix string) string {
	var out []string
	for _, line := range strings.Split(prefix, "\n") {
		if name, val, ok := strings.Cut(strings.TrimPrefix(line, "#define "), " "); ok && line != name {
			out = append(out, name+"="+val)
		}
	}
	return strings.Join(out, " ")
}

// build compiles src with opts, through the disk cache when there is one.
func (w *worker) build(src, opts, name string) (*program, error) {
	var path string
	if w.k.CacheDir != "" {
		h := sha256.New()
		for _, s := range []string{src, opts, w.dev.Platform, w.dev.PlatformVersion, w.dev.Name, w.dev.Driver} {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
		path = filepath.Join(w.k.CacheDir, hex.EncodeToString(h.Sum(nil))+".bin")
		if bin, err := os.ReadFile(path); err == nil {
			if p, err := w.ctx.BuildBinary(bin, opts); err == nil {
				if k, err := p.Kernel(name); err == nil {
					return &program{p: p, k: k}, nil
				}
				p.Release()
			}
		}
	}
	p, err := w.ctx.BuildSource(src, opts)
	if err != nil {
		var be *cl.BuildError
		if errors.As(err, &be) {
			return nil, fmt.Errorf("build%s: %s", withOpts(opts), clipLog(be.Log))
		}
		return nil, fmt.Errorf("build%s: %w", withOpts(opts), err)
	}
	k, err := p.Kernel(name)
	if err != nil {
		p.Release()
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	if path != "" {
		if bin, err := p.Binary(); err == nil {
			writeCache(path, bin) // a cache that cannot be written only costs time
		}
	}
	return &program{p: p, k: k}, nil
}

func withOpts(opts string) string {
	if opts == "" {
		return ""
	}
	return " with " + opts
}

// clipLog keeps a build log's first lines, where the first error is.
func clipLog(s string) string {
	const limit = 1500
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

func writeCache(path string, bin []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bin-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(bin)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// fits checks a launch against the device's and the kernel's limits.
func (w *worker) fits(k *cl.Kernel, l Launch) error {
	items := 1
	for d, n := range l.Local {
		items *= n
		if d < len(w.dev.MaxWorkItems) && n > w.dev.MaxWorkItems[d] {
			return fmt.Errorf("work-group of %v: %d work-items in dim %d, the device allows %d", l.Local, n, d, w.dev.MaxWorkItems[d])
		}
	}
	limit := w.dev.MaxWorkGroup
	if kmax, err := k.MaxWorkGroup(); err == nil && kmax > 0 {
		limit = min(limit, kmax)
	}
	if items > limit {
		return fmt.Errorf("work-group of %v is %d work-items; this kernel allows at most %d on %s", l.Local, items, limit, w.dev.Name)
	}
	if lm, err := k.LocalMem(); err == nil && w.dev.LocalMemBytes > 0 && lm > w.dev.LocalMemBytes {
		return fmt.Errorf("the kernel needs %d bytes of local memory, the device has %d", lm, w.dev.LocalMemBytes)
	}
	return nil
}

// problem returns (making it once) the buffers and reference of dims.
func (w *worker) problem(dims []int) (*problemState, error) {
	ps, err := w.buffers(dims)
	if err != nil {
		return nil, err
	}
	if !ps.refDone {
		ps.refErr, ps.refDone = w.reference(ps), true
	}
	return ps, nil
}

// buffers returns (making them once) the buffers of dims, without the
// reference output.
func (w *worker) buffers(dims []int) (*problemState, error) {
	key := fmt.Sprint(dims)
	if ps, ok := w.problems[key]; ok {
		return ps, nil
	}
	ps := &problemState{dims: slices.Clone(dims), bufs: make([]*cl.Buffer, len(w.k.Args)), init: make([][]byte, len(w.k.Args)), ref: make([][]byte, len(w.k.Args)), clean: make([]bool, len(w.k.Args))}
	for i, a := range w.k.Args {
		if a.Size == "" {
			continue
		}
		n, err := w.geom.BufferLen(i, dims)
		if err != nil {
			return nil, err
		}
		t := Types[a.Type]
		if n*int64(t.Size) > w.dev.GlobalMemBytes && w.dev.GlobalMemBytes > 0 {
			return nil, fmt.Errorf("args[%d] (%s): %d elements do not fit the device's memory", i, a.Name, n)
		}
		if a.Data == "" {
			ps.init[i] = fill(a.Fill, t, int(n))
		} else if ps.init[i], err = readData(a.Data, a.Type, n); err != nil {
			return nil, fmt.Errorf("args[%d] (%s).data: %w", i, a.Name, err)
		}
		b, err := w.ctx.NewBuffer(len(ps.init[i]))
		if err != nil {
			return nil, fmt.Errorf("args[%d] (%s): %w", i, a.Name, err)
		}
		// Written now, while the problem is prepared (beside the
		// compiler's start), not by the first run's reset.
		if err := b.Write(ps.init[i]); err != nil {
			return nil, fmt.Errorf("args[%d] (%s): %w", i, a.Name, err)
		}
		ps.bufs[i], ps.clean[i] = b, true
	}
	w.problems[key] = ps
	return ps, nil
}

// reference computes ps's reference outputs: the reference kernel's, or
// the reference config's.
func (w *worker) reference(ps *problemState) error {
	if w.k.Unchecked() || w.k.Check.Verify != "" {
		return nil
	}
	if w.k.Answers() {
		return w.answers(ps)
	}
	cfg, err := w.referenceConfig()
	if err != nil {
		return err
	}
	var k *cl.Kernel
	var global, local []int
	if c := w.k.Check; c.ReferenceKernel != "" {
		src, err := readSources(c.ReferenceSources)
		if err != nil {
			return err
		}
		p, err := w.build(src, strings.Join(w.k.Options, " "), c.ReferenceKernel)
		if err != nil {
			return fmt.Errorf("reference kernel %s: %w", c.ReferenceKernel, err)
		}
		k = p.k
		l, err := w.geom.Launch(cfg, ps.dims)
		if err != nil {
			return err
		}
		global = l.Global // the problem, rounded up to whole work-groups
	} else {
		l, err := w.geom.Launch(cfg, ps.dims)
		if err != nil {
			return fmt.Errorf("reference config: %w", err)
		}
		p, _, err := w.program(w.geom.Prefix(cfg, l))
		if err != nil {
			return fmt.Errorf("reference config: %w", err)
		}
		k = p.k
		if err := w.fits(k, l); err != nil {
			return fmt.Errorf("reference config: %w", err)
		}
		global, local = l.Global, l.Local
	}
	if err := w.setArgs(k, ps, cfg); err != nil {
		return err
	}
	if err := w.reset(ps); err != nil {
		return err
	}
	if w.k.Check.ReferenceKernel != "" {
		clear(ps.clean) // the reference kernel may write what the kernel only reads
	}
	if _, err := w.ctx.Run(k, global, local); err != nil {
		return fmt.Errorf("reference run: %w", err)
	}
	outs, err := w.outputs(ps)
	if err != nil {
		return err
	}
	for i, a := range w.k.Args {
		if a.Output {
			ps.ref[i] = outs[i]
		}
	}
	return nil
}

func (w *worker) setArgs(k *cl.Kernel, ps *problemState, cfg []genome.Value) error {
	for i, a := range w.k.Args {
		if ps.bufs[i] != nil {
			if err := k.SetBuffer(i, ps.bufs[i]); err != nil {
				return fmt.Errorf("args[%d] (%s): %w", i, a.Name, err)
			}
			continue
		}
		v, err := w.geom.ScalarValue(i, cfg, ps.dims)
		if err != nil {
			return err
		}
		b, err := scalar(v, Types[a.Type])
		if err != nil {
			return fmt.Errorf("args[%d] (%s).value: %w", i, a.Name, err)
		}
		if err := k.SetBytes(i, b); err != nil {
			return fmt.Errorf("args[%d] (%s): %w", i, a.Name, err)
		}
	}
	return nil
}

// reset writes every buffer's initial content before a run of the
// kernel, but for the buffers that hold it still: those the kernel reads
// as const, written once (3 arguments of 40 MB: 2 need no rewrite), and
// any not run on since it was written. The run that follows leaves only
// the const ones clean.
func (w *worker) reset(ps *problemState) error {
	for i, b := range ps.bufs {
		if b == nil {
			continue
		}
		if !ps.clean[i] {
			if err := b.Write(ps.init[i]); err != nil {
				return fmt.Errorf("args[%d] (%s): %w", i, w.k.Args[i].Name, err)
			}
		}
		ps.clean[i] = w.readOnly[i]
	}
	return nil
}

// outputs reads the output buffers.
func (w *worker) outputs(ps *problemState) ([][]byte, error) {
	outs := make([][]byte, len(w.k.Args))
	for i, a := range w.k.Args {
		if a.Output {
			outs[i] = make([]byte, ps.bufs[i].Size)
			if err := ps.bufs[i].Read(outs[i]); err != nil {
				return nil, fmt.Errorf("args[%d] (%s): %w", i, a.Name, err)
			}
		}
	}
	return outs, nil
}

// compare checks outputs against the reference; "" when they match.
func (w *worker) compare(ps *problemState, outs [][]byte) string {
	var notes []string
	for i, a := range w.k.Args {
		if a.Output {
			if m := compare(a.Name, outs[i], ps.ref[i], Types[a.Type], w.k.Check); m != nil {
				notes = append(notes, m.String())
			}
		}
	}
	return strings.Join(notes, "; ")
}

// answers reads each output's answer file as its reference.
func (w *worker) answers(ps *problemState) error {
	for i, a := range w.k.Args {
		if !a.Output {
			continue
		}
		b, err := readData(a.Answer, a.Type, int64(len(ps.init[i])/Types[a.Type].Size))
		if err != nil {
			return fmt.Errorf("args[%d] (%s).answer: %w", i, a.Name, err)
		}
		ps.ref[i] = b
	}
	return nil
}
