package spec

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// Defaults filled in for fields a spec leaves out.
const (
	DefaultObjective = "time"
	DefaultSchedule  = "@every 6h"
	DefaultEvals     = 60
)

// SourceBuiltin is the Source of the specs Builtins returns.
const SourceBuiltin = "builtin"

// Budget bounds one tuning cycle.
type Budget struct {
	// Evals is the most configs measured per cycle; 0 means no limit on
	// evaluations, which needs Seconds > 0.
	Evals int `json:"evals"`
	// Seconds is the most wall time per cycle; 0 means no time limit.
	Seconds float64 `json:"seconds,omitempty"`
}

// Verify says how a winning config is verified before it is certified.
// Empty fields mean the certificate issuer's defaults.
type Verify struct {
	Tolerance        string  `json:"tolerance,omitempty"`        // abs, rel or ulp
	Value            float64 `json:"value,omitempty"`            // the tolerance, >= 0
	Repeats          int     `json:"repeats,omitempty"`          // runs compared bit for bit, >= 0
	Nondeterministic string  `json:"nondeterministic,omitempty"` // reject or certify
	Inputs           string  `json:"inputs,omitempty"`           // signed or positive seeded inputs
	// ErrorBudget is the largest error a served config may have, both
	// by its a-priori bound and as measured (zero: none).
	ErrorBudget ErrorBudget `json:"error_budget,omitzero"`
}

// ErrorBudget is a job's error budget: exactly one of its fields is set,
// and > 0; all zero is no budget.
type ErrorBudget struct {
	Abs float64 `json:"abs,omitempty"`
	Rel float64 `json:"rel,omitempty"`
	ULP float64 `json:"ulp,omitempty"`
}

// Settings is b as evaluate's kind and value.
func (b ErrorBudget) Settings() evaluate.ErrorBudget {
	switch {
	case b.Abs > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceAbs, Value: b.Abs}
	case b.Rel > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceRel, Value: b.Rel}
	case b.ULP > 0:
		return evaluate.ErrorBudget{Kind: evaluate.ToleranceULP, Value: b.ULP}
	}
	return evaluate.ErrorBudget{}
}

// Spec is one parsed kernel spec: a YAML/JSON spec file, a FAIR T1 file, or
// a builtin kernel. It is not modified after Parse or Builtins returns it.
type Spec struct {
	Name      string
	Source    string // absolute file path, or "builtin"
	Hash      string // 16 hex chars over the normalised spec; see the package doc
	Evaluator string // "builtin:sgemm", "replay:/abs/path.json.gz", or "" for a bare T1 file
	Objective string
	Schedule  string // cron, as written (default "@every 6h")
	Budget    Budget
	// Problems are the problem sizes to tune, Name being the dims joined by
	// ","; for a builtin kernel they default to its DefaultProblems, for
	// replay they stay empty until Jobs reads the recording.
	Problems []evaluate.Problem
	// ProblemDims names the dims (problem_dims, or the builtin kernel's);
	// nil when unnamed.
	ProblemDims []string
	Params      map[string][]genome.Value // narrowing, by param name (nil if none)
	// Precision names the precision parameters the file declares and the
	// stage each sets (nil if none); a builtin kernel declares its own.
	Precision   map[string]precision.Stage
	Constraints []string
	Default     map[string]genome.Value // partial default config (nil if none)
	Verify      Verify
	TuneOnMiss  bool
	OnMiss      OnMiss // bounds on the jobs misses add; see MissBounds
	// Timeout bounds one measurement by an exec harness (0: its default).
	Timeout time.Duration
	// HarnessLog receives an exec harness's stderr (nil discards it); set
	// by the caller, not read from the file.
	HarnessLog io.Writer
	// OpenCL is the kernel of an `evaluator: opencl` spec (nil otherwise);
	// openclSums are its sources' SHA-256, which the hash covers.
	OpenCL     *opencl.Kernel
	openclSums []string
	// OpenCLRun says how to run OpenCL kernels here; set by the caller,
	// not read from the file (nil: Jobs refuses an opencl spec).
	OpenCLRun *OpenCLRun
	// Note says why a spec is listed but not tuned (an OpenCL T1 file
	// whose kernel cannot be run as written), by field; empty otherwise.
	Note string
	T1   *genome.T1 // set for FAIR T1 files
	Raw  []byte     // the file's bytes (for a builtin: its canonical JSON)
}

// OpenCLRun is how this machine runs OpenCL kernels.
type OpenCLRun struct {
	// Worker is the command that starts a worker (quasimd opencl-worker).
	Worker []string
	// CacheDir keeps compiled programs (empty: none on disk).
	CacheDir string
	// Env is added to the worker's environment.
	Env []string
	// Unavailable, when set, says why there is no OpenCL device here:
	// Jobs refuses opencl specs with it.
	Unavailable string
}

// file is how errors name s's file.
func (s *Spec) file() string {
	if s.Source == "" {
		return s.Name
	}
	return s.Source
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// dimsString formats dims for messages.
func dimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, x := range dims {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
