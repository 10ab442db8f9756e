package evaluate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/genome"
)

// Status is the outcome of measuring one config. The names follow the FAIR T4
// invalidity classes.
type Status string

// The statuses a trial can have.
const (
	StatusOK          Status = "ok"
	StatusInvalid     Status = "invalid"      // the config cannot run (e.g. too many threads)
	StatusCompile     Status = "compile"      // the kernel failed to compile
	StatusRuntime     Status = "runtime"      // the kernel failed while running
	StatusTimeout     Status = "timeout"      // the measurement ran past its limit
	StatusWrongResult Status = "wrong_result" // the output failed verification
	StatusConstraints Status = "constraints"  // the config violates the space's constraints
)

// Statuses lists every status in a fixed order.
var Statuses = []Status{StatusOK, StatusInvalid, StatusCompile, StatusRuntime, StatusTimeout, StatusWrongResult, StatusConstraints}

// ParseStatus parses a status name.
func ParseStatus(s string) (Status, error) {
	if slices.Contains(Statuses, Status(s)) {
		return Status(s), nil
	}
	return "", fmt.Errorf("unknown status %q", s)
}

// Problem is one problem size of a kernel: a named integer vector such as
// 1024,1024,1024.
type Problem struct {
	Name  string // e.g. "1024x1024x1024"; empty means Dims joined by "x"
	Dims  []int
	Names []string // optional names of the dims, e.g. m,n,k, usable in constraints
}

// String is the problem as written on the wire: the dims joined by commas.
func (p Problem) String() string {
	parts := make([]string, len(p.Dims))
	for i, d := range p.Dims {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ",")
}

// ParseDims reads a problem as written on the wire or a command line:
// "1024,1024,1024" (x also separates), each dim a positive integer.
func ParseDims(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty")
	}
	parts := strings.Split(strings.ReplaceAll(s, "x", ","), ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("dimension %d (%q) is not a positive integer", i, p)
		}
		out[i] = n
	}
	return out, nil
}

// Vars are the problem's named dims as constraint variables; none when
// the dims are unnamed.
func (p Problem) Vars() map[string]genome.Value {
	vars := map[string]genome.Value{}
	if len(p.Names) == len(p.Dims) {
		for i, n := range p.Names {
			vars[n] = genome.Int(int64(p.Dims[i]))
		}
	}
	return vars
}

// Trial is one measured config of a job.
type Trial struct {
	Key    string    `json:"key"`              // the config's canonical key
	Status Status    `json:"status"`           // outcome
	Time   float64   `json:"time_ms"`          // objective time in ms; 0 unless Status is ok
	Times  []float64 `json:"times_ms"`         // every repetition, ms
	Cost   float64   `json:"cost_s"`           // seconds spent measuring (simulated for replay)
	Error  string    `json:"error,omitempty"`  // what failed, for failed statuses
	At     time.Time `json:"at,omitzero"`      // when it was measured
	Device string    `json:"device,omitempty"` // device class it ran on
	// EnergyMJ is the energy of one run in mJ, and PowerW the device's
	// mean power while measuring; 0 when the device gave no reading.
	EnergyMJ float64 `json:"energy_mj,omitempty"`
	PowerW   float64 `json:"power_w,omitempty"`
	// Throttle lists the reasons the device ran below its clocks while this
	// measurement ran (thermal, hardware slowdown, power brake, power cap);
	// Remeasured counts the measurements thrown away before it because of
	// a transient one (all but the power cap).
	Throttle   []string `json:"throttle,omitempty"`
	Remeasured int      `json:"remeasured,omitempty"`
	// MaxTempC and SMClockMHz are the device's highest temperature and
	// mean SM clock while measuring, where a GPU meter read them.
	MaxTempC    float64 `json:"max_temp_c,omitempty"`
	SMClockMHz  float64 `json:"sm_clock_mhz,omitempty"`
	MemClockMHz float64 `json:"mem_clock_mhz,omitempty"`
	UtilPct     float64 `json:"util_pct,omitempty"`
	// PhasesMS is where a recorded measurement's wall time went, in ms,
	// under the FAIR T4 names of "times" (compilation, benchmark,
	// framework, search_algorithm, validation); only the phases recorded.
	PhasesMS map[string]float64 `json:"phases_ms,omitempty"`
	// Observables are the other quantities recorded for the config, by
	// name as recorded (GFLOP/s, GB/s, a score that was the objective).
	Observables map[string]float64 `json:"observables,omitempty"`
}

// OK reports whether the trial produced a valid time.
func (t Trial) OK() bool { return t.Status == StatusOK }

// Evaluator measures configs of one kernel on one device.
type Evaluator interface {
	// Space returns the search space for problem p.
	Space(p Problem) (*genome.Space, error)
	// Device names the device class the evaluator measures on.
	Device() string
	// Evaluate measures config c of problem p. Kernel failures are trial
	// statuses; the error is for the harness (a cancelled ctx, a config outside
	// the space, an unknown problem).
	Evaluate(ctx context.Context, c genome.Config, p Problem) (Trial, error)
}

// Prefetcher is implemented by evaluators that can prepare configs before
// they are measured, such as compiling source kernels side by side or
// while the device runs the one before. The tuner tells it each
// generation of more than one config, in the order it measures them,
// before the first; configs told before and not again are not coming.
// Prefetch returns at once; a config it could not prepare is measured as
// any other.
type Prefetcher interface {
	Prefetch(cs []genome.Config, p Problem)
}

// Racer is implemented by evaluators that measure a config in batches of
// runs (Reps) and can stop early on one that is clearly slower than the
// best of its problem so far (Reps.Outpaced): more runs would make its time
// more precise, not make it the best. Its time is still the median of the
// runs it made. The tuner calls Race after each trial of a time objective;
// bestMS 0 turns racing off for p.
type Racer interface {
	Race(p Problem, bestMS float64)
}

// Replayer is implemented by evaluators that replay recorded measurements:
// they run nothing, so device settings (power limits, clocks) are not
// applied for them.
type Replayer interface{ Replays() bool }

// Work is what one run of a kernel at a problem does, for a roofline: its
// floating-point operations and the bytes it must move at the least (every
// input read once, every output written once). Achieved GFLOP/s is Flops
// over the run's time; arithmetic intensity is Flops over Bytes.
type Work struct {
	Flops float64
	Bytes float64
}

// Worker is implemented by evaluators that know their kernel's work.
type Worker interface {
	// Work gives the work of one run of problem p; false when unknown.
	Work(p Problem) (Work, bool)
}

// ErrUnknownProblem is returned for a problem the evaluator cannot measure.
var ErrUnknownProblem = errors.New("unknown problem")

// ErrNotInSpace is returned for a config outside the evaluator's space.
var ErrNotInSpace = errors.New("config not in space")
