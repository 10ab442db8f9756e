package api

import "time"

// Routes of perturbation experiments (see Experiment). Keep the whole
// route list sorted by path; these sort first.
const (
	RouteCausalExperiment  = "POST /v1/causal/{pipeline}/experiment"
	RouteCausalExperiments = "GET /v1/causal/{pipeline}/experiments"
)

// ExperimentRequest is the body of POST /v1/causal/{pipeline}/experiment;
// every field is optional. Runs is the number of pairs per perturbation
// (default 10, at most MaxExperimentRuns). Perturbations replace the
// pipeline's own set; Baseline runs no perturbation, only Runs baseline
// iterations (the pipeline's end-to-end time at its served configs).
type ExperimentRequest struct {
	Runs          int            `json:"runs,omitempty"`
	Perturbations []Perturbation `json:"perturbations,omitempty"`
	Baseline      bool           `json:"baseline,omitempty"`
	// Speedups runs, in place of the default perturbations, Coz's virtual
	// speedup of each stage beside a delay of it (the builtin pipeline
	// only: an exec harness delays just the stage asked for).
	Speedups bool `json:"speedups,omitempty"`
}

// MaxExperimentRuns bounds ExperimentRequest.Runs.
const MaxExperimentRuns = 1000

// Perturbation changes one stage of a pipeline: a delay (busy wait after
// its kernel) or another config, one of the two.
type Perturbation struct {
	Name    string  `json:"name,omitempty"`
	Stage   string  `json:"stage"`
	DelayMS float64 `json:"delay_ms,omitempty"`
	Config  string  `json:"config,omitempty"`
	// Speedup is Coz's virtual speedup: the stage made this fraction
	// faster by pausing every other stream f·t each time it runs for t,
	// the pauses subtracted from the end-to-end time.
	Speedup float64 `json:"speedup,omitempty"`
}

// ExperimentStage is one stage of the pipeline an experiment ran, at the
// config it ran at; Served is true when that is its job's served config.
type ExperimentStage struct {
	Name    string   `json:"name"`
	Kernel  string   `json:"kernel"`
	Problem string   `json:"problem"`
	Stream  string   `json:"stream"`
	After   []string `json:"after,omitempty"`
	Config  string   `json:"config"`
	Served  bool     `json:"served,omitempty"`
}

// ExperimentResult is one perturbation's predicted and measured change of
// end-to-end time, in percent of the paired baseline's (positive: slower),
// each an Estimate over the runs.
type ExperimentResult struct {
	Perturbation Perturbation `json:"perturbation"`
	Kernel       string       `json:"kernel"`
	Problem      string       `json:"problem"`
	// OnPath is the share of baseline iterations in which the stage was
	// on the critical path.
	OnPath    float64  `json:"on_path"`
	Predicted Estimate `json:"predicted"`
	Measured  Estimate `json:"measured"`
	// Error is |predicted - measured| between the medians, in points;
	// Outside how far the predicted median lies outside the measured
	// interval (0 inside).
	Error   float64 `json:"error"`
	Outside float64 `json:"outside"`
	BaseMS  float64 `json:"base_ms"`
	// Scale is the stage's time alone at the new config over its own.
	Scale float64 `json:"scale,omitempty"`
	// OvershootMS is the median of how much longer than asked a delay
	// waited; the prediction uses the delay as inserted.
	OvershootMS float64 `json:"overshoot_ms,omitempty"`
	// PausedMS is the median pause a virtual speedup inserted (f·t per
	// run of the stage), subtracted from the measured change.
	PausedMS float64 `json:"paused_ms,omitempty"`
}

// Experiment is a perturbation experiment: POST
// /v1/causal/{pipeline}/experiment's answer and one entry of GET
// /v1/causal/{pipeline}/experiments.
type Experiment struct {
	ID       int               `json:"id"`
	Pipeline string            `json:"pipeline"`
	At       time.Time         `json:"at"`
	TookS    float64           `json:"took_s"`
	Runs     int               `json:"runs"`
	Stages   []ExperimentStage `json:"stages"`
	// Baseline is the end-to-end time of the baseline iterations, ms.
	Baseline Estimate           `json:"baseline"`
	Results  []ExperimentResult `json:"results"`
	// MeanError and WorstError summarise Results' Error; Within counts
	// predictions inside the measured interval or within Tolerance
	// points of it.
	MeanError  float64 `json:"mean_error"`
	WorstError float64 `json:"worst_error"`
	Within     int     `json:"within"`
	Tolerance  float64 `json:"tolerance"`
}

// Experiments is GET /v1/causal/{pipeline}/experiments, newest first.
type Experiments struct {
	Pipeline    string       `json:"pipeline"`
	Experiments []Experiment `json:"experiments"`
}
