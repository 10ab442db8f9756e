package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// Options configures a Harness. Zero values take the defaults.
type Options struct {
	// Command is the harness and its arguments; no shell is involved.
	Command []string
	// Dir is the harness's working directory (default: quasimd's).
	Dir string
	// Env is added to quasimd's environment for the harness.
	Env []string
	// Timeout bounds each run request (default 60s).
	Timeout time.Duration
	// HelloTimeout bounds the wait for the hello line (default 10s).
	HelloTimeout time.Duration
	// Reps is the warm-up and repetitions of a measurement (evaluate.Reps
	// defaults), asked for in batches of run requests.
	Reps evaluate.Reps
	// Stderr receives the harness's stderr (default: discarded).
	Stderr io.Writer
}

// Protocol is the version of docs/kernel-authors/harness-protocol.md this package speaks.
const Protocol = 1

// maxLine bounds one line from the harness.
const maxLine = 1 << 20

// Param is a parameter as a harness declares it.
type Param struct {
	Name    string `json:"name"`
	Values  []any  `json:"values"`
	Default any    `json:"default,omitempty"`
	// Precision, when set, makes the parameter a precision stage (input,
	// intermediate, accumulation, output): its values are format names,
	// most accurate first (accuracy.go).
	Precision string `json:"precision,omitempty"`
}

// Hello is the harness's first line.
type Hello struct {
	Type        string   `json:"type"`
	Protocol    int      `json:"protocol"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Device      string   `json:"device,omitempty"`
	Params      []Param  `json:"params"`
	Constraints []string `json:"constraints,omitempty"`
	// Pipeline, when set, is a pipeline the harness runs for quasimd's
	// perturbation experiments (pipeline.go).
	Pipeline *PipelineDecl `json:"pipeline,omitempty"`
}

// RunRequest is quasimd's request for a measurement (or, with Verify, a
// verify run).
type RunRequest struct {
	Type        string         `json:"type"`
	ID          int            `json:"id"`
	Config      map[string]any `json:"config"`
	Problem     []int          `json:"problem"`
	Repetitions int            `json:"repetitions"`
	Verify      bool           `json:"verify"`
	// ErrorKind, on a verify run of a job with an error budget, asks the
	// harness for its accuracy in the budget's units (accuracy.go).
	ErrorKind string `json:"error_kind,omitempty"`
}

// Result is the harness's answer to a run.
type Result struct {
	Type     string    `json:"type"`
	ID       int       `json:"id"`
	TimesMS  []float64 `json:"times_ms,omitempty"`
	EnergyJ  float64   `json:"energy_j,omitempty"`
	Checksum *float64  `json:"checksum,omitempty"`
	Output   string    `json:"output,omitempty"`
	Accuracy *Accuracy `json:"accuracy,omitempty"`
	// Parity, on a verify run, is the harness's own comparison of the
	// run's outputs with its reference, element by element; without it
	// the checksum is compared with the default config's.
	Parity *Parity `json:"parity,omitempty"`
	// PhasesMS is where the request's wall time went, in ms, under the
	// FAIR T4 names (compilation, benchmark, validation, framework).
	PhasesMS   map[string]float64 `json:"phases_ms,omitempty"`
	ErrorClass string             `json:"error_class,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// Parity is a harness's comparison of a verify run's outputs with its
// own reference (the OpenCL worker's reference config or kernel).
type Parity struct {
	Reference string  `json:"reference"`      // what the outputs were compared with
	Tolerance string  `json:"tolerance_kind"` // abs, rel, abs_or_rel or exact; "sum of " in front when sums were compared
	Abs       float64 `json:"abs,omitempty"`
	Rel       float64 `json:"rel,omitempty"`
	MaxAbsErr float64 `json:"max_abs_err"`
	MaxRelErr float64 `json:"max_rel_err"`
	Worst     string  `json:"worst"` // the worst element, its value, the reference's and its error
	Bad       int     `json:"bad"`   // elements outside the tolerance
	Total     int     `json:"total"` // elements compared
	// NotChecked says why no output was compared (a kernel tuned without
	// an answer); the other fields are then empty.
	NotChecked string `json:"not_checked,omitempty"`
}

// Harness is an evaluate.Evaluator and evaluate.Verifier backed by a child
// process. It is safe for concurrent use; runs are sequential.
type Harness struct {
	opt   Options
	hello Hello
	base  []genome.Param

	mu     sync.Mutex
	p      *proc
	nextID int
	refs   map[string]float64 // problem -> checksum of the default config
	closed bool
	best   map[string]float64 // problem -> best time so far, to race against (Race)
	// crashedServed is, after a request whose process exited during it,
	// how many requests that process had answered before.
	crashedServed int
}

// proc is one running harness process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan line
	stderr *tail
	done   chan struct{} // closed when the process has been waited for
	err    error         // its exit, once done
	served int           // requests it answered (under Harness.mu)
}

type line struct {
	b   []byte
	err error
}

// tail keeps the last bytes written to it, and copies them on.
type tail struct {
	mu  sync.Mutex
	buf []byte
	to  io.Writer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	t.mu.Unlock()
	if t.to != nil {
		t.to.Write(p)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// Start runs the harness and reads its hello line.
func Start(opt Options) (*Harness, error) { return StartContext(context.Background(), opt) }

// StartContext is Start that stops waiting for the hello, and kills the
// harness, when ctx is done.
func StartContext(ctx context.Context, opt Options) (*Harness, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(opt.Command) == 0 || opt.Command[0] == "" {
		return nil, errors.New("exec harness: no command")
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 60 * time.Second
	}
	if opt.HelloTimeout <= 0 {
		opt.HelloTimeout = 10 * time.Second
	}
	opt.Reps = opt.Reps.WithDefaults()
	h := &Harness{opt: opt, refs: map[string]float64{}}
	p, hello, err := h.spawn(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkHello(hello); err != nil {
		p.kill()
		return nil, fmt.Errorf("exec harness %s: hello: %w", opt.Command[0], err)
	}
	base, err := params(hello)
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("exec harness %s: hello: %w", opt.Command[0], err)
	}
	h.p, h.hello, h.base = p, hello, base
	return h, nil
}

// Hello returns what the harness said of itself.
func (h *Harness) Hello() Hello { return h.hello }

func checkHello(m Hello) error {
	switch {
	case m.Type != "hello":
		return fmt.Errorf("type %q, want hello", m.Type)
	case m.Protocol != Protocol:
		return fmt.Errorf("protocol %d, this quasimd speaks %d", m.Protocol, Protocol)
	case m.Name == "":
		return errors.New("no name")
	case len(m.Params) == 0:
		return errors.New("no params")
	}
	return checkPipeline(m)
}

// params turns the declared parameters into genome parameters.
func params(m Hello) ([]genome.Param, error) {
	out := make([]genome.Param, len(m.Params))
	for i, p := range m.Params {
		if !genome.IsName(p.Name) {
			return nil, fmt.Errorf("params[%d].name %q is not a name", i, p.Name)
		}
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("params[%d] (%s): no values", i, p.Name)
		}
		gp := genome.Param{Name: p.Name}
		for j, v := range p.Values {
			gv, err := genome.ValueOf(v)
			if err != nil {
				return nil, fmt.Errorf("params[%d].values[%d]: %w", i, j, err)
			}
			if j == 0 {
				gp.Kind = gv.Kind
			}
			gp.Values = append(gp.Values, gv)
		}
		if p.Default != nil {
			dv, err := genome.ValueOf(p.Default)
			if err != nil {
				return nil, fmt.Errorf("params[%d].default: %w", i, err)
			}
			k := slices.IndexFunc(gp.Values, func(v genome.Value) bool { return v.String() == dv.String() })
			if k < 0 {
				return nil, fmt.Errorf("params[%d].default %v is not among its values", i, p.Default)
			}
			gp.Default = k
		}
		if err := checkPrecision(i, p, gp); err != nil {
			return nil, err
		}
		out[i] = gp
	}
	return out, nil
}

// spawn starts a harness process and reads its hello; it kills the
// process when ctx is done first.
func (h *Harness) spawn(ctx context.Context) (*proc, Hello, error) {
	name := h.opt.Command[0]
	cmd := exec.Command(name, h.opt.Command[1:]...)
	cmd.Dir = h.opt.Dir
	if len(h.opt.Env) > 0 {
		cmd.Env = append(cmd.Environ(), h.opt.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, lines: make(chan line, 1), stderr: &tail{to: h.opt.Stderr}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, Hello{}, fmt.Errorf("exec harness %s: %w", name, err)
	}
	// An os.Pipe, not cmd.StdoutPipe: Wait closes a StdoutPipe as soon as
	// the process exits, so a harness that wrote its last lines and exited
	// (a hello with a bad protocol, say) could lose them to the reader.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, Hello{}, fmt.Errorf("exec harness %s: %w", name, err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close() // the child holds its own copy; EOF comes when it exits
	if err != nil {
		stdout.Close()
		return nil, Hello{}, fmt.Errorf("exec harness %s: %w", name, err)
	}
	go func() {
		defer stdout.Close()
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			b, err := readLine(r)
			p.lines <- line{b, err}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case l, ok := <-p.lines:
		if !ok || l.err != nil {
			p.kill()
			return nil, Hello{}, fmt.Errorf("exec harness %s: exited before its hello: %s", name, p.exitNote())
		}
		var m Hello
		if err := json.Unmarshal(l.b, &m); err != nil {
			p.kill()
			return nil, Hello{}, fmt.Errorf("exec harness %s: hello %q: %w", name, clip(l.b), err)
		}
		return p, m, nil
	case <-time.After(h.opt.HelloTimeout):
		p.kill()
		return nil, Hello{}, fmt.Errorf("exec harness %s: no hello within %s", name, h.opt.HelloTimeout)
	case <-ctx.Done():
		p.kill()
		return nil, Hello{}, fmt.Errorf("exec harness %s: waiting for its hello: %w", name, ctx.Err())
	}
}

// readLine reads one line, without its newline, of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > maxLine {
			return nil, fmt.Errorf("line over %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(b) > 0 && err == io.EOF {
				return bytes.TrimRight(b, "\r\n"), nil
			}
			return nil, err
		}
		return bytes.TrimRight(b, "\r\n"), nil
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// kill ends the process group and waits for the process.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	p.stdin.Close()
	<-p.done
}

// exitNote describes how the process ended, with its stderr's tail.
func (p *proc) exitNote() string {
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
	note := "still running"
	select {
	case <-p.done:
		note = "exited"
		if p.err != nil {
			note = p.err.Error()
		}
	default:
	}
	if s := p.stderr.String(); s != "" {
		note += "; stderr: " + s
	}
	return note
}

// Device implements evaluate.Evaluator.
func (h *Harness) Device() string {
	if h.hello.Device != "" {
		return h.hello.Device
	}
	return "exec/" + h.hello.Name
}

// Space implements evaluate.Evaluator: the declared parameters and
// constraints, with the problem's named dims as variables.
func (h *Harness) Space(p evaluate.Problem) (*genome.Space, error) {
	sp, err := genome.NewSpace(slices.Clone(h.base), genome.SpaceOptions{Constraints: h.hello.Constraints, Vars: p.Vars()})
	if err != nil {
		return nil, fmt.Errorf("exec harness %s: %w", h.hello.Name, err)
	}
	return sp, nil
}

// Evaluate implements evaluate.Evaluator.
func (h *Harness) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	sp, err := h.Space(p)
	if err != nil {
		return evaluate.Trial{}, err
	}
	if !sp.InRange(c) {
		return evaluate.Trial{}, fmt.Errorf("exec harness %s: %w: %v", h.hello.Name, evaluate.ErrNotInSpace, []int(c))
	}
	start := time.Now()
	tr := evaluate.Trial{Key: sp.Key(c), Device: h.Device(), At: start}
	if err := sp.Check(c); err != nil {
		tr.Status, tr.Error = evaluate.StatusConstraints, err.Error()
		return tr, nil
	}
	// Batches of run requests until Reps has enough; the first asks for the
	// warm-up runs too and their times (the first ones) are left out.
	r := h.opt.Reps
	var times []float64
	var joules, metered float64 // energy of the runs that reported it
	warm := r.Warmup
	best := h.raceBest(p)
	for k := r.Next(nil); k > 0 && !r.Outpaced(times, best); k = r.Next(times) {
		// A batch fits well within the timeout of one request.
		if m := evaluate.Median(times); m > 0 {
			k = min(k, max(1, int(0.5*float64(h.opt.Timeout)/float64(time.Millisecond)/m)))
		}
		res, status, note, err := h.run(ctx, sp.ConfigMap(c), p, warm+k, false, "")
		if err != nil {
			tr.Cost = time.Since(start).Seconds()
			return tr, err
		}
		addPhases(&tr, res.PhasesMS)
		if status != evaluate.StatusOK {
			tr.Status, tr.Error = status, note
			tr.Cost = time.Since(start).Seconds()
			return tr, nil
		}
		got := res.TimesMS
		if len(got) > warm {
			got = got[warm:] // a harness that answers fewer times than asked keeps them all
		}
		warm = 0
		times = append(times, got...)
		if res.EnergyJ > 0 {
			joules += res.EnergyJ * float64(len(got))
			metered += float64(len(got))
		}
	}
	tr.Cost = time.Since(start).Seconds()
	tr.Status, tr.Times, tr.Time = evaluate.StatusOK, times, evaluate.Median(times)
	if metered > 0 {
		tr.EnergyMJ = 1000 * joules / metered
		tr.PowerW = tr.EnergyMJ / tr.Time
	}
	return tr, nil
}

// Race implements evaluate.Racer.
func (h *Harness) Race(p evaluate.Problem, bestMS float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.best == nil {
		h.best = map[string]float64{}
	}
	h.best[p.String()] = bestMS
}

func (h *Harness) raceBest(p evaluate.Problem) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.best[p.String()]
}

// addPhases adds a result's phases to the trial's, keeping only finite
// times >= 0.
func addPhases(tr *evaluate.Trial, phases map[string]float64) {
	for name, v := range phases {
		if !(v >= 0) || math.IsInf(v, 0) {
			continue
		}
		if tr.PhasesMS == nil {
			tr.PhasesMS = map[string]float64{}
		}
		tr.PhasesMS[name] += v
	}
}

// run sends one request and classifies what came back. A fault of the
// harness is a status and a note; the error is for a cancelled ctx or a
// harness that cannot be started.
func (h *Harness) run(ctx context.Context, cfg map[string]any, pr evaluate.Problem, reps int, verify bool, errKind string) (Result, evaluate.Status, string, error) {
	var res Result
	var status evaluate.Status
	var note string
	fault, fnote, err := h.exchange(ctx, func(id int) any {
		return RunRequest{Type: "run", ID: id, Config: cfg, Problem: pr.Dims, Repetitions: reps, Verify: verify, ErrorKind: errKind}
	}, func(b []byte, id int) bool {
		var ok bool
		res, status, note, ok = parseResult(b, id, verify)
		return ok
	})
	if err != nil || fault != "" {
		return Result{}, fault, fnote, err
	}
	return res, status, note, nil
}

// exchange sends the request req(id) and hands the answer line to parse,
// which reports whether it answers request id at all (when not, the
// stream cannot be trusted and the harness is restarted). A fault of the
// harness (gone, silent, not answering) is a status and a note; the error
// is for a cancelled ctx or a closed Harness.
//
// A process that exits during a request after it answered others may have
// been broken by one of them (a kernel writing out of bounds corrupts the
// worker's heap, and the next request aborts): the request is then sent
// once more to a fresh process, and only a crash there is its own.
func (h *Harness) exchange(ctx context.Context, req func(id int) any, parse func(b []byte, id int) bool) (evaluate.Status, string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	status, note, err := h.exchangeLocked(ctx, req, parse)
	if status != evaluate.StatusRuntime || !strings.HasPrefix(note, crashNote) || h.crashedServed == 0 {
		return status, note, err
	}
	// The fresh process answering clears the config; failing in any way
	// (crashing again, or a fresh start too slow for the timeout on a busy
	// machine) leaves the crash as it was, with what the retry met.
	status2, note2, err := h.exchangeLocked(ctx, req, parse)
	if err != nil || status2 == "" {
		return status2, note2, err
	}
	return status, note + " (again in a fresh process: " + note2 + ")", nil
}

// crashNote starts the note of a process that exited during a request.
const crashNote = "harness exited during the run: "

func (h *Harness) exchangeLocked(ctx context.Context, req func(id int) any, parse func(b []byte, id int) bool) (evaluate.Status, string, error) {
	h.crashedServed = 0
	if h.closed {
		return "", "", errors.New("exec harness: closed")
	}
	if h.p == nil {
		p, hello, err := h.spawn(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", "", ctx.Err()
			}
			return evaluate.StatusRuntime, "restart failed: " + err.Error(), nil
		}
		if err := checkHello(hello); err != nil || !sameParams(hello, h.hello) {
			p.kill()
			return evaluate.StatusRuntime, "the restarted harness declared other parameters", nil
		}
		h.p = p
	}
	h.nextID++
	id := h.nextID
	line, err := json.Marshal(req(id))
	if err != nil {
		return "", "", err
	}
	p := h.p
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		h.p = nil
		note := "harness gone before the request: " + p.exitNote()
		p.kill()
		return evaluate.StatusRuntime, note, nil
	}
	timer := time.NewTimer(h.opt.Timeout)
	defer timer.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok || l.err != nil {
			h.p = nil
			note := crashNote + p.exitNote()
			p.kill()
			h.crashedServed = p.served
			return evaluate.StatusRuntime, note, nil
		}
		if !parse(l.b, id) {
			h.p = nil
			p.kill()
		}
		p.served++
		return "", "", nil
	case <-timer.C:
		h.p = nil
		p.kill()
		return evaluate.StatusTimeout, fmt.Sprintf("no answer within %s; harness restarted", h.opt.Timeout), nil
	case <-ctx.Done():
		h.p = nil
		p.kill()
		return "", "", ctx.Err()
	}
}

// Notify writes msg as a line the harness does not answer (a hint such
// as the OpenCL worker's prepare), to a running harness only: a harness
// not running is not started for it, and a failed write is left to the
// next request to find.
func (h *Harness) Notify(msg any) {
	h.notify(msg, true)
}

// TryNotify is Notify when the harness is free now (no run in flight),
// so the line comes before the next request; it reports false, writing
// nothing, when it is busy.
func (h *Harness) TryNotify(msg any) bool {
	return h.notify(msg, false)
}

func (h *Harness) notify(msg any, wait bool) bool {
	line, err := json.Marshal(msg)
	if err != nil {
		return true
	}
	if wait {
		h.mu.Lock()
	} else if !h.mu.TryLock() {
		return false
	}
	defer h.mu.Unlock()
	if h.p != nil && !h.closed {
		h.p.stdin.Write(append(line, '\n'))
	}
	return true
}

// parseResult reads the answer line b to run id: the result and its
// status, or a note of what is wrong with it. ok is false when b is no
// answer to that run at all, after which the stream cannot be trusted.
func parseResult(b []byte, id int, verify bool) (res Result, status evaluate.Status, note string, ok bool) {
	if err := json.Unmarshal(b, &res); err != nil || res.Type != "result" || res.ID != id {
		return Result{}, evaluate.StatusRuntime, fmt.Sprintf("harness printed %q, not the result of run %d; restarted", clip(b), id), false
	}
	if res.ErrorClass != "" {
		st, err := evaluate.ParseStatus(res.ErrorClass)
		if err != nil || st == evaluate.StatusOK {
			st = evaluate.StatusRuntime
		}
		return res, st, res.Error, true
	}
	if len(res.TimesMS) == 0 {
		return res, evaluate.StatusRuntime, "harness answered without times", true
	}
	for _, t := range res.TimesMS {
		if !(t > 0) || math.IsInf(t, 0) {
			return res, evaluate.StatusRuntime, fmt.Sprintf("harness answered a time of %v ms", t), true
		}
	}
	if res.EnergyJ < 0 {
		return res, evaluate.StatusRuntime, fmt.Sprintf("harness answered an energy of %v J", res.EnergyJ), true
	}
	if verify && (res.Checksum == nil || math.IsNaN(*res.Checksum) || math.IsInf(*res.Checksum, 0)) {
		return res, evaluate.StatusRuntime, "harness answered a verify run without a finite checksum", true
	}
	if p := res.Parity; p != nil {
		// A comparison that compared nothing, or whose errors are not
		// numbers, certifies nothing; one that found bad elements is a
		// wrong result whatever the harness called it.
		switch {
		case !verify:
			res.Parity = nil
		case p.NotChecked != "":
			*p = Parity{NotChecked: p.NotChecked}
		case p.Total <= 0 || p.Bad < 0 || p.Bad > p.Total || !(p.MaxAbsErr >= 0) || !(p.MaxRelErr >= 0) || p.Abs < 0 || p.Rel < 0:
			return res, evaluate.StatusRuntime, fmt.Sprintf("harness answered a parity of %d of %d elements bad, errors %v and %v", p.Bad, p.Total, p.MaxAbsErr, p.MaxRelErr), true
		case p.Bad > 0:
			return res, evaluate.StatusWrongResult, fmt.Sprintf("%d of %d elements outside the tolerance; worst %s", p.Bad, p.Total, p.Worst), true
		}
	}
	return res, evaluate.StatusOK, "", true
}

func sameParams(a, b Hello) bool {
	x, _ := json.Marshal([]any{a.Params, a.Pipeline})
	y, _ := json.Marshal([]any{b.Params, b.Pipeline})
	return bytes.Equal(x, y) && slices.Equal(a.Constraints, b.Constraints)
}

// Close asks the harness to shut down and kills it after 2 s.
func (h *Harness) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	p := h.p
	h.p = nil
	if p == nil {
		return nil
	}
	p.stdin.Write([]byte(`{"type":"shutdown"}` + "\n"))
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		p.kill()
	}
	return nil
}
