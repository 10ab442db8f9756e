package opencl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Compile helpers: pocl compiles under one lock per process, so a build
// on a second thread of the worker waits for the one in flight. Helper
// processes (the worker's own binary with --helper) each build the
// configs they are sent and launch them once on buffers of their own:
// pocl's kernel cache, shared through POCL_CACHE_DIR, then holds each
// program and its work-group code when the worker comes to it, and the
// worker's build and first launch are cache hits. Helpers run only while
// the worker answers a run request and is not launching: the worker stops
// them (SIGSTOP, to their process groups) for its launches and between
// requests, when the device may be another job's, so no helper shares the
// cores with a timed run.

// helperJob is a line to a helper: a config to build and launch once.
type helperJob struct {
	Opts    string         `json:"opts"`
	Config  map[string]any `json:"config"`
	Problem []int          `json:"problem"`
}

// helperDone is a helper's answer to a job.
type helperDone struct {
	Opts  string `json:"opts"`
	Error string `json:"error,omitempty"`
}

// helperMain is a helper's loop.
func helperMain(k *Kernel, in io.Reader, out io.Writer) error {
	k.CompileAhead, k.CacheDir = "off", "" // pocl's cache is what it fills
	w, err := newWorker(k)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var j helperJob
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return fmt.Errorf("helper job %q: %w", sc.Text(), err)
		}
		d := helperDone{Opts: j.Opts}
		if err := w.warm(j); err != nil {
			d.Error = err.Error()
		}
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return sc.Err()
}

// warm builds j's config and launches it once over j's problem, from the
// buffers' initial content as a run would.
func (w *worker) warm(j helperJob) error {
	cfg, _, err := w.config(j.Config)
	if err != nil {
		return err
	}
	dims := j.Problem
	if dims == nil && len(w.k.Problems) > 0 {
		dims = w.k.Problems[0]
	}
	l, err := w.geom.Launch(cfg, dims)
	if err != nil {
		return err
	}
	p, err := w.buildPrefixed(w.geom.Prefix(cfg, l))
	if err != nil {
		return err
	}
	defer func() {
		p.k.Release()
		p.p.Release()
	}()
	ps, err := w.buffers(dims)
	if err != nil {
		return err
	}
	if err := w.fits(p.k, l); err != nil {
		return err
	}
	if err := w.setArgs(p.k, ps, cfg); err != nil {
		return err
	}
	if err := w.reset(ps); err != nil {
		return err
	}
	_, err = w.ctx.Run(p.k, l.Global, l.Local)
	return err
}

// aheadMode is how the worker of k on d builds the configs it is told
// come next (Kernel.CompileAhead): "process" (helpers) where asked for
// or by default on pocl's CPU device with its kernel cache on and a core
// to spare, and helpers can run; "thread" where asked for (process
// included, where helpers cannot run) or by default on other devices;
// else "off".
func aheadMode(k *Kernel, d Device) string {
	helpersFit := helpersWork && os.Getenv("POCL_KERNEL_CACHE") != "0" && strings.Contains(d.Platform, "Portable Computing Language")
	switch k.CompileAhead {
	case "process":
		if helpersFit {
			return "process"
		}
		return "thread"
	case "on", "thread":
		return "thread"
	case "", "auto":
		if d.Type != "cpu" {
			return "thread"
		}
		if helpersFit && runtime.NumCPU() > 1 {
			return "process"
		}
	}
	return "off"
}

// maxHelpers bounds the helper processes of a worker; each holds its own
// copy of the problems' buffers.
const maxHelpers = 4

// helpers runs a worker's helper processes.
type helpers struct {
	argv   []string
	stderr io.Writer
	n      int
	limit  time.Duration // a job running longer is killed with its helper

	mu       sync.Mutex
	changed  *sync.Cond
	queue    []*hjob
	jobs     map[string]*hjob // by options: queued, running, or done and not taken
	procs    []*helperProc
	deaths   int       // helpers that died in a row, with no job done between
	paused   bool      // helpers are stopped
	pausedAt time.Time // since when
	closed   bool
}

type hjob struct {
	helperJob
	running, done bool
	proc          *helperProc
	started       time.Time // moved on by the time stopped, so limit counts running time
}

type helperProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	job   *hjob
	dead  bool
}

// maxDeaths stops starting helpers after that many died in a row: the
// worker then builds every config itself, as without helpers.
const maxDeaths = 3

func newHelpers(k *Kernel, stderr io.Writer) (*helpers, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	// A job is a build and one launch; the worker waits for it within its
	// own run timeout, which kills it and its helpers when it runs out.
	limit := k.PrepareTimeout
	if limit <= 0 {
		limit = 60 * time.Second
	}
	h := &helpers{argv: []string{exe, WorkerMode, "--kernel", string(b), "--helper"}, stderr: &prefixed{w: stderr, prefix: WorkerMode + " --helper: "},
		n: min(runtime.NumCPU(), maxHelpers), limit: limit, jobs: map[string]*hjob{}}
	h.changed = sync.NewCond(&h.mu)
	return h, nil
}

// set makes js, in order, the configs that come next: jobs queued for
// others are dropped (left from a cycle cut short), and so are finished
// ones no longer asked for.
func (h *helpers) set(js []helperJob) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	want := map[string]bool{}
	for _, j := range js {
		want[j.Opts] = true
	}
	h.queue = slices.DeleteFunc(h.queue, func(x *hjob) bool { return !want[x.Opts] })
	for o, x := range h.jobs {
		if !want[o] && !x.running {
			delete(h.jobs, o)
		}
	}
	for _, j := range js {
		if _, ok := h.jobs[j.Opts]; ok || len(h.queue) >= maxAhead {
			continue
		}
		x := &hjob{helperJob: j}
		h.jobs[j.Opts] = x
		h.queue = append(h.queue, x)
	}
	h.dispatch()
}

// take is called before the worker builds opts: it waits for the job of
// opts, queued or running, up to its limit once running (then its helper
// is killed). A job no helper can take any more is dropped: the worker
// builds it itself.
func (h *helpers) take(opts string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x, ok := h.jobs[opts]
	if !ok {
		return
	}
	defer delete(h.jobs, opts)
	for !x.done {
		if !x.running {
			if len(h.procs) == 0 && (h.deaths >= maxDeaths || h.closed) {
				for i, q := range h.queue {
					if q == x {
						h.queue = append(h.queue[:i], h.queue[i+1:]...)
						break
					}
				}
				return
			}
			h.changed.Wait()
			continue
		}
		left := time.Until(x.started.Add(h.limit))
		if left <= 0 {
			fmt.Fprintf(h.stderr, "%s: compile helper still on %s after %s: killed\n", WorkerMode, opts, h.limit)
			x.proc.kill()
			return // its reader marks it dead
		}
		t := time.AfterFunc(left, func() {
			h.mu.Lock()
			h.changed.Broadcast()
			h.mu.Unlock()
		})
		h.changed.Wait()
		t.Stop()
	}
}

// dispatch sends queued jobs to idle helpers, starting helpers up to n.
// The caller holds h.mu.
func (h *helpers) dispatch() {
	for len(h.queue) > 0 && !h.closed {
		var p *helperProc
		for _, q := range h.procs {
			if q.job == nil && !q.dead {
				p = q
				break
			}
		}
		if p == nil {
			if len(h.procs) >= h.n || h.deaths >= maxDeaths || h.paused {
				return
			}
			var err error
			if p, err = h.start(); err != nil {
				fmt.Fprintf(h.stderr, "%s: compile helper: %v\n", WorkerMode, err)
				h.deaths = maxDeaths
				return
			}
		}
		x := h.queue[0]
		h.queue = h.queue[1:]
		b, _ := json.Marshal(x.helperJob)
		x.running, x.proc, x.started = true, p, time.Now()
		p.job = x
		if _, err := p.stdin.Write(append(b, '\n')); err != nil {
			p.kill() // its reader ends the job
		}
	}
}

// start starts a helper; the caller holds h.mu.
func (h *helpers) start() (*helperProc, error) {
	cmd := exec.Command(h.argv[0], h.argv[1:]...)
	cmd.Stderr = h.stderr
	cmd.SysProcAttr = helperAttr() // a process group of its own, killed with the worker
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &helperProc{cmd: cmd, stdin: stdin}
	if h.paused {
		p.signal(syscall.SIGSTOP)
	}
	h.procs = append(h.procs, p)
	go h.read(p, stdout)
	go h.watch(p)
	return p, nil
}

// read takes a helper's answers until it exits.
func (h *helpers) read(p *helperProc, stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var d helperDone
		if json.Unmarshal(sc.Bytes(), &d) != nil {
			continue
		}
		h.mu.Lock()
		if x := p.job; x != nil && x.Opts == d.Opts {
			x.running, x.done, p.job = false, true, nil
			h.deaths = 0
			h.dispatch()
			h.changed.Broadcast()
		}
		h.mu.Unlock()
	}
	p.cmd.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	p.dead = true
	if x := p.job; x != nil {
		x.running, x.done, p.job = false, true, nil // the worker builds it, and meets what the helper met
	}
	for i, q := range h.procs {
		if q == p {
			h.procs = append(h.procs[:i], h.procs[i+1:]...)
			break
		}
	}
	if !h.closed {
		h.deaths++
		if h.deaths == maxDeaths {
			fmt.Fprintf(h.stderr, "%s: %d compile helpers died in a row; building without them\n", WorkerMode, maxDeaths)
		}
		h.dispatch()
	}
	h.changed.Broadcast()
}

// watch kills a helper whose job runs past the limit, such as a kernel
// that never returns, so it does not hold a core.
func (h *helpers) watch(p *helperProc) {
	for {
		time.Sleep(time.Second)
		h.mu.Lock()
		dead, x, paused := p.dead, p.job, h.paused
		over := x != nil && !paused && time.Since(x.started) > h.limit
		h.mu.Unlock()
		if dead {
			return
		}
		if over {
			fmt.Fprintf(h.stderr, "%s: compile helper on %s for over %s: killed\n", WorkerMode, x.Opts, h.limit)
			p.kill()
			return
		}
	}
}

// pause stops every helper until resume.
func (h *helpers) pause() {
	h.mu.Lock()
	if h.paused {
		h.mu.Unlock()
		return
	}
	h.paused, h.pausedAt = true, time.Now()
	var pids []int
	for _, p := range h.procs {
		if !p.dead && p.signal(syscall.SIGSTOP) == nil {
			pids = append(pids, p.cmd.Process.Pid)
		}
	}
	h.mu.Unlock()
	for _, pid := range pids {
		waitStopped(pid)
	}
}

func (h *helpers) resume() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.paused {
		return
	}
	h.paused = false
	stopped := time.Since(h.pausedAt)
	for _, p := range h.procs {
		if !p.dead {
			p.signal(syscall.SIGCONT)
			if p.job != nil {
				p.job.started = p.job.started.Add(stopped)
			}
		}
	}
	h.dispatch()
}

// close kills the helpers.
func (h *helpers) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, p := range h.procs {
		p.kill()
	}
}

// signal sends sig to p's process group: pocl may run the linker as a
// child of the helper.
func (p *helperProc) signal(sig syscall.Signal) error {
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

func (p *helperProc) kill() { p.signal(syscall.SIGKILL) }

// prefixed writes each line after a prefix, so that the worker's stderr,
// which the harness quotes when the worker fails, tells a helper's lines
// from its own.
type prefixed struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	mid    bool // within a line
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []byte
	for _, c := range b {
		if !p.mid {
			out = append(out, p.prefix...)
		}
		out = append(out, c)
		p.mid = c != '\n'
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
