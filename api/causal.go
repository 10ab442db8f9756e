package api

// Pipeline is a declared pipeline: a pipeline file of the spec dir.
type Pipeline struct {
	Name              string   `json:"name"`
	Source            string   `json:"source"`
	Kernels           []string `json:"kernels"` // the kernel specs its spans record
	BudgetByInfluence bool     `json:"budget_by_influence"`
	RetainSpans       int      `json:"retain_spans"`   // retention: the newest batches, at most this many spans
	RetainBatches     int      `json:"retain_batches"` // and this many batches
}

// SpansResponse answers POST /v1/spans, whose body is a JSON array of
// spans (causal.Span) of one declared pipeline. Any local uid may post, at
// a rate limited per uid; a bad span is a 400 naming its index and field,
// and nothing of the batch is stored.
type SpansResponse struct {
	Pipeline string `json:"pipeline"`
	Stored   int    `json:"stored"` // spans stored
	Batch    uint64 `json:"batch"`  // the batch's number in the pipeline, from 1
	// DroppedBatches and DroppedSpans are what the pipeline's retention
	// dropped, the oldest batches, to keep this one.
	DroppedBatches int `json:"dropped_batches"`
	DroppedSpans   int `json:"dropped_spans"`
}

// Estimate is one figure over a pipeline's iterations: its order
// statistics and a 95% bootstrap interval [Lo, Hi] of the median.
type Estimate struct {
	N      int     `json:"n"` // iterations it is over
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Causal answers GET /v1/causal/{pipeline}: the model's profile of the
// pipeline's stored spans (see package causal).
type Causal struct {
	Pipeline   string `json:"pipeline"`
	Batches    int    `json:"batches"`    // stored batches read
	Spans      int    `json:"spans"`      // spans in the profiled iterations
	Iterations int    `json:"iterations"` // iterations profiled
	// Skipped says what was left out and why: batches that no longer
	// decode, iterations that do not build a graph (spans of two processes
	// numbered as one iteration, say).
	Skipped  []string `json:"skipped"`
	EndToEnd Estimate `json:"end_to_end_ns"` // an iteration's recorded end-to-end time, ns
	// CurveStep is the step of each kernel's curve: points at 0,
	// CurveStep, 2×CurveStep, ... of kernel speedup.
	CurveStep float64        `json:"curve_step"`
	Kernels   []CausalKernel `json:"kernels"` // by influence, highest first
	// Attributed is the share of an iteration's critical path spent in
	// rows' spans (the rest is lag: host work, launch latency and waits
	// no span shows); Tracks each device and stream's busy share of an
	// iteration, never above 1 (rows on different tracks add past 1 when
	// the tracks run at once).
	Attributed Estimate      `json:"attributed"`
	Tracks     []CausalTrack `json:"tracks,omitempty"`
}

// CausalTrack is one device and stream (or thread) of a pipeline.
type CausalTrack struct {
	Device string   `json:"device"`
	Stream string   `json:"stream"`
	Busy   Estimate `json:"busy"`
}

// CausalKernel is one kernel of a pipeline's profile; the fractions are of
// an iteration's end-to-end time.
type CausalKernel struct {
	Kernel string `json:"kernel"`
	// Problem is set when two or more stages run the kernel (with two or
	// more problems, on two or more streams): each problem is a row.
	Problem   string   `json:"problem,omitempty"`
	Share     Estimate `json:"share"`     // the time its spans run (two at once count once)
	Critical  Estimate `json:"critical"`  // its time on the critical path
	Influence Estimate `json:"influence"` // end-to-end fraction saved per fraction of its time saved, near 0
	// Slack is how much longer, in ns, the kernel's spans may take before
	// an iteration's end-to-end time grows (the least of its spans'); 0
	// on the critical path.
	Slack Estimate `json:"slack_ns"`
	// Curve is Coz's virtual-speedup curve: Curve[i] is the end-to-end
	// fraction saved with the kernel i×CurveStep faster.
	Curve []Estimate `json:"curve"`
	// Tuned is the kernel's time tuned against its default, from the
	// store's trials of its jobs; nil when not known (TunedNote says why).
	Tuned     *TunedTime `json:"tuned,omitempty"`
	TunedNote string     `json:"tuned_note,omitempty"`
	// Gain is the predicted end-to-end fraction saved with the kernel at
	// its tuned time; nil when Tuned is.
	Gain *Estimate `json:"gain,omitempty"`
	// Measured is the check of the prediction by perturbation experiment;
	// nil until one has run.
	Measured *MeasuredCheck `json:"measured,omitempty"`
}

// TunedTime is, for each of a kernel's problems in the pipeline, its
// job's best measured time against its default config's.
type TunedTime struct {
	Problems []TunedProblem `json:"problems"`
}

// TunedProblem is one job's tuned and default time.
type TunedProblem struct {
	Problem   string  `json:"problem"` // as the spans give it
	Job       string  `json:"job"`
	DefaultMS float64 `json:"default_ms"`
	BestMS    float64 `json:"best_ms"`
	Scale     float64 `json:"scale"` // BestMS / DefaultMS: the spans' durations are scaled by it
}

// MeasuredCheck is a perturbation experiment's check of a prediction.
type MeasuredCheck struct {
	Experiment string   `json:"experiment"` // what was changed
	Predicted  float64  `json:"predicted"`  // end-to-end fraction saved, as the model said
	Measured   Estimate `json:"measured"`   // end-to-end fraction saved, as measured
	Runs       int      `json:"runs"`
}

// ImportReport is what `quasimctl causal import` read of a Chrome trace:
// what it mapped and what it dropped, by reason.
type ImportReport struct {
	Events     int `json:"events"`
	Spans      int `json:"spans"`
	Deps       int `json:"deps"`
	Waits      int `json:"waits"`
	Iterations int `json:"iterations"`
	// IterationsFrom is "markers" (ProfilerStep#N), "repeats" (inferred:
	// RepeatingTracks of Tracks streams and threads repeat their kernel
	// sequence Iterations times) or "none" (Warning says what that means).
	IterationsFrom  string          `json:"iterations_from"`
	Tracks          int             `json:"tracks,omitempty"`
	RepeatingTracks int             `json:"repeating_tracks,omitempty"`
	Gaps            ImportGaps      `json:"gaps"`
	Warning         string          `json:"warning,omitempty"`
	CutOff          bool            `json:"cut_off,omitempty"`
	Dropped         []ImportDropped `json:"dropped"`
	// Bind and Steps: with ProfilerStep#N markers, how GPU work was bound
	// to steps and what each step is (causal.BindReport, StepReport).
	Bind  ImportBind   `json:"bind"`
	Steps []ImportStep `json:"steps,omitempty"`
}

// ImportBind counts GPU events by how they were bound to a step: by their
// launch's correlation id (GraphKernels of them shared it with others;
// Later of them moved to the step they ran in), with no launch in the
// trace by their correlation id's place among a step's launches (ByOrder,
// with --end gpu) or by the time they ran, or dropped.
type ImportBind struct {
	ByLaunch     int `json:"by_launch"`
	GraphKernels int `json:"graph_kernels"`
	Later        int `json:"later"`
	ByOrder      int `json:"by_order,omitempty"`
	ByTime       int `json:"by_time"`
	Dropped      int `json:"dropped"`
}

// ImportStep is one ProfilerStep#N: its period (to the next step's start,
// the last to its last GPU op), its GPU busy time, whether it is
// GPU-bound (its host ran ahead; its HostCalls runtime calls, HostCallNs
// long, waited for the launch queue and are left out of its graph).
type ImportStep struct {
	N          int   `json:"n"`
	StartNs    int64 `json:"start_ns"`
	PeriodNs   int64 `json:"period_ns"`
	GPUBusyNs  int64 `json:"gpu_busy_ns"`
	GPUBound   bool  `json:"gpu_bound"`
	HostCalls  int   `json:"host_calls,omitempty"`
	HostCallNs int64 `json:"host_call_ns,omitempty"`
}

// ImportGaps counts the idle gaps on GPU streams by how the model took
// them: waiting on another stream's span (Event) or a host call (Host)
// that ended in the gap, made a dependency, or on a launch the trace does
// not show (HostUnseen: the span starts no earlier than it did).
type ImportGaps struct {
	Event      int `json:"event"`
	Host       int `json:"host"`
	HostUnseen int `json:"host_unseen"`
	Lag        int `json:"lag"` // kept as lag: its launch returned before, nothing ended in the gap
}

// ImportDropped counts the events dropped for one reason.
type ImportDropped struct {
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}
