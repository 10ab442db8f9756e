package opencl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/harness"
	"github.com/quasim/quasim/genome"
)

// Options configures an Evaluator.
type Options struct {
	// Worker is the command that runs a worker: a program whose first
	// arguments make it call WorkerMain (quasimd opencl-worker). The
	// evaluator adds --kernel.
	Worker []string
	// Timeout bounds one run request, compilation included (default
	// 60s); a worker that does not answer in time is killed and
	// restarted.
	Timeout time.Duration
	// Reps is the repetition rule (evaluate.Reps defaults).
	Reps evaluate.Reps
	// Stderr receives the worker's stderr.
	Stderr io.Writer
	// Env is added to the worker's environment.
	Env []string
}

// Evaluator measures an OpenCL kernel in a worker process: an exec
// harness (package harness) whose harness is the worker, so a crash, a
// hang or a driver fault costs one trial and a restart, never the caller.
// It implements evaluate.Evaluator, evaluate.Verifier and
// evaluate.Refresher.
type Evaluator struct {
	*harness.Harness
	kernel Kernel
	opt    Options
}

// ErrNoWorker is returned by New without a worker command.
var ErrNoWorker = errors.New("no OpenCL worker command")

// New checks k and starts its worker, which reads the sources, picks the
// device, prepares k.Problems (each within k.PrepareTimeout) and says
// hello. A reference that crashes or hangs fails here, saying so. A kernel that cannot load (no OpenCL, a missing
// source, no such kernel) fails here with the worker's reason.
func New(k Kernel, opt Options) (*Evaluator, error) { return NewContext(context.Background(), k, opt) }

// NewContext is New that stops waiting for the worker, and kills it, when
// ctx is done.
func NewContext(ctx context.Context, k Kernel, opt Options) (*Evaluator, error) {
	if _, err := k.Compile(); err != nil {
		return nil, err
	}
	if len(opt.Worker) == 0 {
		return nil, ErrNoWorker
	}
	b, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	cmd := append(append([]string{}, opt.Worker...), "--kernel", string(b))
	prep := k.PrepareTimeout
	if prep <= 0 {
		prep = 60 * time.Second
	}
	// The worker prepares each problem within prep before its hello.
	hello := 30*time.Second + time.Duration(len(k.Problems)+1)*prep
	h, err := harness.StartContext(ctx, harness.Options{Command: cmd, Timeout: opt.Timeout, Reps: opt.Reps, Stderr: opt.Stderr, Env: opt.Env,
		HelloTimeout: hello})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("opencl %s: %w", k.Name, ctx.Err())
		}
		// The command line holds the whole kernel: name the worker instead.
		msg := strings.ReplaceAll(err.Error(), opt.Worker[0], WorkerMode)
		return nil, fmt.Errorf("opencl %s: %s", k.Name, msg)
	}
	return &Evaluator{Harness: h, kernel: k, opt: opt}, nil
}

var _ evaluate.Refresher = (*Evaluator)(nil)

// Fresh implements evaluate.Refresher: another worker of the same kernel
// and options, preparing problem p only.
func (e *Evaluator) Fresh(ctx context.Context, p evaluate.Problem) (evaluate.Evaluator, func(), error) {
	k := e.kernel
	k.Problems = [][]int{p.Dims}
	ev, err := NewContext(ctx, k, e.opt)
	if err != nil {
		return nil, nil, err
	}
	return ev, func() { ev.Close() }, nil
}

// Prefetch implements evaluate.Prefetcher: it tells the worker which
// configs come next, which it compiles ahead where compile_ahead allows.
func (e *Evaluator) Prefetch(cs []genome.Config, p evaluate.Problem) {
	sp, err := e.Space(p)
	if err != nil {
		return
	}
	msg := prepareRequest{Type: "prepare", Problem: p.Dims}
	for _, c := range cs {
		if sp.InRange(c) {
			msg.Configs = append(msg.Configs, sp.ConfigMap(c))
		}
	}
	if !e.TryNotify(msg) {
		go e.Notify(msg) // never waits for a run in flight
	}
}

// Discover runs worker --list, with env added to its environment, and
// returns what it found; a worker that cannot run is an error, no OpenCL
// is Devices.Unavailable.
func Discover(ctx context.Context, worker, env []string) (Devices, error) {
	if len(worker) == 0 {
		return Devices{}, ErrNoWorker
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, worker[0], append(worker[1:], "--list")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return Devices{}, fmt.Errorf("%s --list: %w: %s", WorkerMode, err, strings.TrimSpace(stderr.String()))
	}
	var d Devices
	if err := json.Unmarshal(out, &d); err != nil {
		return Devices{}, fmt.Errorf("%s --list: %w", WorkerMode, err)
	}
	return d, nil
}

// DefinesKernel reports whether OpenCL C source src defines a kernel
// called name (a __kernel or kernel function), ignoring comments.
func DefinesKernel(src, name string) bool {
	src = comments.ReplaceAllString(src, " ")
	re := regexp.MustCompile(`\b(__)?kernel\b[^;{}]*?\b` + regexp.QuoteMeta(name) + `\s*\(`)
	return re.MatchString(src)
}

var comments = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)

// constPointee matches const (or the __constant address space) in a
// pointer parameter's declaration before its last '*'.
var constPointee = regexp.MustCompile(`\b(const|__constant|constant)\b`)

// ConstPointee reports whether a kernel parameter's declaration (as
// KernelParams gives it) is a pointer to data the kernel may not write:
// "__global const float *a", "__constant float *c". A const pointer to
// writable data ("float *const a") is not; a type hidden behind a macro
// counts as writable.
func ConstPointee(decl string) bool {
	i := strings.LastIndexByte(decl, '*')
	return i >= 0 && constPointee.MatchString(decl[:i])
}

// KernelParams returns the parameter declarations of kernel name in src
// (comments removed, each trimmed), or false when its definition cannot
// be read (a macro that writes the list, say).
func KernelParams(src, name string) ([]string, bool) {
	src = comments.ReplaceAllString(src, " ")
	re := regexp.MustCompile(`\b(__)?kernel\b[^;{}]*?\b` + regexp.QuoteMeta(name) + `\s*\(`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		return nil, false
	}
	depth, start := 0, loc[1]
	var out []string
	for i := loc[1]; i < len(src); i++ {
		switch src[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				if p := strings.TrimSpace(src[start:i]); p != "" && p != "void" {
					out = append(out, p)
				}
				return out, true
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(src[start:i]))
				start = i + 1
			}
		case '#', '{', ';':
			return nil, false // a directive or the body before the list closed
		}
	}
	return nil, false
}

// paramKind tells a parameter declaration's kind: a pointer (a buffer),
// a scalar of a built-in type, or unknown (a type behind a macro or a
// typedef, such as CLBlast's real_arg).
func paramKind(decl string) string {
	if strings.Contains(decl, "*") || strings.Contains(decl, "global") || strings.Contains(decl, "__constant") {
		return "pointer"
	}
	for _, f := range strings.FieldsFunc(decl, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		switch f {
		case "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double",
			"half", "bool", "size_t", "unsigned", "signed":
			return "scalar"
		}
	}
	return "unknown"
}

// CheckArgs compares args with the kernel's parameter declarations:
// their number, and buffer against pointer at each position whose type
// can be told without the preprocessor. Errors are *FieldError naming
// "args" or "args[i]".
func CheckArgs(args []Arg, decls []string, kernel string) error {
	for i, a := range args {
		if i >= len(decls) {
			break
		}
		isBuf := a.Size != ""
		kind := paramKind(decls[i])
		if kind != "unknown" && isBuf != (kind == "pointer") {
			what, want := "a scalar", "a pointer (a buffer)"
			if isBuf {
				what, want = "a buffer", "a scalar"
			}
			return ferr(fmt.Sprintf("args[%d]", i), "%s is %s, but parameter %d of %s is %q, %s", argName(a, i), what, i, kernel, decls[i], want)
		}
	}
	if len(args) != len(decls) {
		return ferr("args", "%d arguments, but %s takes %d: (%s)", len(args), kernel, len(decls), strings.Join(decls, ", "))
	}
	return nil
}

func argName(a Arg, i int) string {
	if a.Name != "" {
		return a.Name
	}
	return fmt.Sprintf("argument %d", i)
}

var _ evaluate.Evaluator = (*Evaluator)(nil)
var _ evaluate.Prefetcher = (*Evaluator)(nil)
var _ evaluate.Verifier = (*Evaluator)(nil)

// ReferenceKey is the key of the config the worker compares every
// config's output with; "" when that is a reference kernel.
func (e *Evaluator) ReferenceKey() (string, error) { return e.kernel.ReferenceKey() }
