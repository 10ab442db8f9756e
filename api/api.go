package api

import (
	"errors"
	"time"
)

// Routes, as Go 1.22 method patterns. Keep them sorted by path.
const (
	RouteCausal       = "GET /v1/causal/{pipeline}"
	RouteCerts        = "GET /v1/certs"
	RouteCertPubkey   = "GET /v1/certs/pubkey"
	RouteCert         = "GET /v1/certs/{id}"
	RouteCertRevoke   = "POST /v1/certs/{id}/revoke"
	RouteConfig       = "GET /v1/configs/{kernel}"
	RouteDevices      = "GET /v1/devices"
	RouteFleet        = "GET /v1/fleet"
	RouteKernels      = "GET /v1/kernels"
	RouteKernelCycles = "GET /v1/kernels/{kernel}/cycles"
	RouteImport       = "POST /v1/kernels/{kernel}/import"
	RouteKernelTrials = "GET /v1/kernels/{kernel}/trials"
	RouteKernelTune   = "POST /v1/kernels/{kernel}/tune"
	RouteMemgraphPlan = "POST /v1/memgraph/plan"
	RouteObservations = "POST /v1/observations"
	RouteReload       = "POST /v1/reload"
	RouteSpans        = "POST /v1/spans"
	RouteStatus       = "GET /v1/status"
)

// Host is the host name clients send; the server accepts it and localhost.
const Host = "quasimd"

// HeaderRevoked, on GET /v1/certs/{id}, carries the revocation reason of a
// revoked certificate; the body stays the certificate exactly as signed.
const HeaderRevoked = "Quasim-Revoked"

// HeaderVersion carries the daemon's version on every response.
const HeaderVersion = "Quasim-Version"

// MaxBodyBytes bounds request bodies.
const MaxBodyBytes = 8 << 20

// Code classifies an error on the wire.
type Code string

// Error codes.
const (
	CodeInvalidArgument  Code = "invalid_argument"
	CodeNotFound         Code = "not_found"
	CodeConflict         Code = "conflict"
	CodePermissionDenied Code = "permission_denied"
	CodeUnavailable      Code = "unavailable"
	CodeRateLimited      Code = "rate_limited"
	CodeInternal         Code = "internal"
)

// Sentinels the client maps codes back to; test them with errors.Is.
var (
	// ErrInvalidArgument is a malformed or impossible request.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound is an unknown kernel, job, problem or cycle.
	ErrNotFound = errors.New("not found")
	// ErrConflict is a request that clashes with the daemon's state.
	ErrConflict = errors.New("conflict")
	// ErrPermissionDenied is a write from a caller that may only read.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrUnavailable is a daemon that cannot be reached or is shutting down.
	ErrUnavailable = errors.New("daemon unavailable")
	// ErrRateLimited is a request over its caller's rate (HTTP 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrInternal is a failure inside the daemon.
	ErrInternal = errors.New("internal error")
)

// CodeOf maps a sentinel to its code.
func CodeOf(err error) Code {
	switch {
	case errors.Is(err, ErrInvalidArgument):
		return CodeInvalidArgument
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrConflict):
		return CodeConflict
	case errors.Is(err, ErrPermissionDenied):
		return CodePermissionDenied
	case errors.Is(err, ErrUnavailable):
		return CodeUnavailable
	case errors.Is(err, ErrRateLimited):
		return CodeRateLimited
	}
	return CodeInternal
}

// Sentinel maps a code to its sentinel.
func (c Code) Sentinel() error {
	switch c {
	case CodeInvalidArgument:
		return ErrInvalidArgument
	case CodeNotFound:
		return ErrNotFound
	case CodeConflict:
		return ErrConflict
	case CodePermissionDenied:
		return ErrPermissionDenied
	case CodeUnavailable:
		return ErrUnavailable
	case CodeRateLimited:
		return ErrRateLimited
	}
	return ErrInternal
}

// Error is the body of every non-2xx response.
type Error struct {
	Error string `json:"error"`
	Code  Code   `json:"code"`
}

// Status is GET /v1/status.
type Status struct {
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	UptimeS  float64   `json:"uptime_s"`
	StateDir string    `json:"state_dir"`
	SpecDir  string    `json:"spec_dir"`
	Kernels  int       `json:"kernels"`
	Jobs     int       `json:"jobs"`
	Running  []string  `json:"running"` // jobs with a cycle in flight that measures
	// Waiting are the jobs whose cycle in flight waits for an idle device
	// (the idle gate: other processes load it).
	Waiting   []string `json:"waiting"`
	Trials    int      `json:"trials"`      // stored trials, all jobs
	SpecError []string `json:"spec_errors"` // spec files that failed to load, with why
	Stale     []Stale  `json:"stale"`       // jobs whose served config runtimes found drifting
	// Pipelines are the declared pipelines (pipeline files of the spec
	// dir), by name.
	Pipelines []Pipeline `json:"pipelines"`
	// Failing are the jobs whose newest ended cycle failed (a device or
	// lock error, an evaluator that would not start), newest first.
	Failing []Failing `json:"failing"`
	// LastSuccess is when a cycle of any job last ended done; absent when
	// none has.
	LastSuccess *time.Time `json:"last_success,omitempty"`
}

// Failing is a job whose newest ended cycle failed.
type Failing struct {
	Job   string    `json:"job"`
	Cycle int       `json:"cycle"`
	At    time.Time `json:"at"`
	Error string    `json:"error"`
	// Since is when the first of the job's failed cycles since its last
	// success ended: how long it has been failing.
	Since time.Time `json:"since"`
	// RetryAt is when the job's cycle is tried again (a failed cycle is
	// retried with backoff); absent when no retry is due.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// LastSuccess is when a cycle of this job last ended done; absent when
	// none has.
	LastSuccess *time.Time `json:"last_success,omitempty"`
}

// Healthy is false when something needs an operator: a job whose cycles
// fail, or a spec file that did not load.
func (s Status) Healthy() bool { return len(s.Failing) == 0 && len(s.SpecError) == 0 }

// Devices is GET /v1/devices: what quasimd found it can measure on.
type Devices struct {
	CPU    CPU    `json:"cpu"`
	NVIDIA NVIDIA `json:"nvidia"`
	OpenCL OpenCL `json:"opencl"`
}

// OpenCL is what quasimd's OpenCL worker found: every device of every
// platform, or why there are none.
type OpenCL struct {
	Devices     []OpenCLDevice `json:"devices"`
	Unavailable string         `json:"unavailable,omitempty"`
}

// OpenCLDevice is one OpenCL device and its device class.
type OpenCLDevice struct {
	Class           string `json:"class"`
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platform_version"`
	Name            string `json:"name"`
	Vendor          string `json:"vendor"`
	Type            string `json:"type"` // cpu, gpu, accelerator or other
	Version         string `json:"version"`
	Driver          string `json:"driver"`
	ComputeUnits    int    `json:"compute_units"`
	MaxWorkGroup    int    `json:"max_work_group"`
	LocalMemBytes   int64  `json:"local_mem_bytes"`
	GlobalMemBytes  int64  `json:"global_mem_bytes"`
	Lock            string `json:"lock,omitempty"`
}

// CPU is the machine's processor and its device class.
type CPU struct {
	Class    string   `json:"class"`
	Model    string   `json:"model"`
	Vendor   string   `json:"vendor"`
	Arch     string   `json:"arch"`
	Threads  int      `json:"threads"`
	Cores    int      `json:"cores,omitempty"`
	Sockets  int      `json:"sockets,omitempty"`
	Features []string `json:"features"`
	MHz      float64  `json:"mhz,omitempty"`
	MaxMHz   float64  `json:"max_mhz,omitempty"`
	Energy   string   `json:"energy"`         // the energy counter, or "unavailable: why"
	Lock     string   `json:"lock,omitempty"` // the device's flock file; empty without --lock-dir
	Error    string   `json:"error,omitempty"`
	// Ceilings are the roofline's roofs quasimd measured on this CPU; nil
	// until measured (once per device class, shortly after the first start).
	Ceilings *Ceilings `json:"ceilings,omitempty"`
}

// Ceilings are a device's measured float32 FMA rate and streaming copy
// bandwidth, with every thread busy.
type Ceilings struct {
	GFLOPS       float64 `json:"gflops"`        // float32, every thread busy
	GFLOPSThread float64 `json:"gflops_thread"` // float32, one thread alone
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	Threads      int     `json:"threads"`
	// Levels are the copy bandwidths of buffers that fit each cache level,
	// smallest first (the roofs of a working set that fits one);
	// LevelsNote says why there are none.
	Levels     []CacheCeiling `json:"levels,omitempty"`
	LevelsNote string         `json:"levels_note,omitempty"`
	FMA        string         `json:"fma"` // the FMA loop that ran
	How        string         `json:"how"`
	MeasuredAt time.Time      `json:"measured_at"`
}

// CacheCeiling is the streaming copy bandwidth, every thread busy, of
// buffers that fit one cache level.
type CacheCeiling struct {
	Name         string  `json:"name"`         // "L1", "L2", "L3"
	Bytes        int64   `json:"bytes"`        // the level's size, one instance as CPU 0 sees it
	BufferBytes  int     `json:"buffer_bytes"` // each thread's source (and destination) buffer
	BandwidthGBs float64 `json:"bandwidth_gbs"`
}

// Work is one run's floating-point operations and compulsory traffic
// (inputs read once, outputs written once): GFLOP/s is Flops over the
// time, arithmetic intensity Flops over Bytes.
type Work struct {
	Flops float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
}

// NVIDIA is the GPUs NVML reports, or why there are none.
type NVIDIA struct {
	Driver      string `json:"driver,omitempty"`
	CUDA        string `json:"cuda,omitempty"`
	GPUs        []GPU  `json:"gpus"`
	Unavailable string `json:"unavailable,omitempty"`
}

// GPU is one NVIDIA GPU and its device class.
type GPU struct {
	Index             int     `json:"index"`
	Class             string  `json:"class"`
	Name              string  `json:"name"`
	UUID              string  `json:"uuid"`
	Architecture      string  `json:"architecture,omitempty"`
	ComputeCapability string  `json:"compute_capability"`
	MemoryMiB         uint64  `json:"memory_mib"`
	PowerLimitW       float64 `json:"power_limit_w,omitempty"`
	MinPowerLimitW    float64 `json:"min_power_limit_w,omitempty"`
	MaxPowerLimitW    float64 `json:"max_power_limit_w,omitempty"`
	Lock              string  `json:"lock,omitempty"` // the device's flock file; empty without --lock-dir
}

// Stale is a job whose served config is suspect, and why; a re-tune is
// queued.
type Stale struct {
	Job    string    `json:"job"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// Observation is what a runtime measured of a served config: POST
// /v1/observations takes a batch of them.
type Observation struct {
	Kernel      string    `json:"kernel"`
	Problem     string    `json:"problem"`
	Device      string    `json:"device,omitempty"` // empty: the kernel's device class
	Key         string    `json:"key"`              // the config that ran
	LatenciesMS []float64 `json:"latencies_ms"`
	Source      string    `json:"source,omitempty"` // who measured, for the record
	// Error is the largest error the runtime saw in the config's output
	// against a reference it computed on a sample of its inputs, in the
	// unit of the job's error budget (verify.error_budget: relative for
	// rel, absolute for abs, ulps for ulp); finite and >= 0, 0 when not
	// checked. One above the bound the config's certificate records (or
	// its budget) is recorded with the caller's uid; it revokes that
	// certificate when the daemon's own re-verification of the config
	// fails, when enough distinct uids report it, or at once from an
	// operator's uid: the job falls back to its next certified config (or
	// the default) and is re-tuned. For a stage of a zoned pipeline's
	// map, see ZoneStage.Limit.
	Error float64 `json:"error,omitempty"`
}

// ObservationsRequest is the body of POST /v1/observations. Any local uid
// may send one, for jobs that exist, at a rate the daemon limits per uid
// (429 with CodeRateLimited and Retry-After past it).
type ObservationsRequest struct {
	Observations []Observation `json:"observations"`
}

// ObservationsResponse says what was stored, which jobs were found
// drifting (their served config is marked stale and a re-tune queued),
// which certificates were revoked because a reported error was above
// their bound and the daemon had the evidence (their job falls back and is
// re-tuned), and which certificates' configs the daemon re-verifies
// because of the report before it revokes anything (Checking).
type ObservationsResponse struct {
	Stored   int      `json:"stored"`
	Drift    []string `json:"drift"`
	Revoked  []string `json:"revoked"`
	Checking []string `json:"checking,omitempty"`
}

// KernelsPage is GET /v1/kernels?limit=&cursor=: the kernels with at most
// limit jobs in all (DefaultJobsLimit when only cursor is given,
// MaxJobsLimit at most), kernel after kernel, a kernel whose jobs span
// pages appearing on each with those of the page. Next is the cursor of
// the page after it; empty on the last. Without limit and cursor, GET
// /v1/kernels answers every kernel with all its jobs, as a []Kernel.
type KernelsPage struct {
	Kernels []Kernel `json:"kernels"`
	Next    string   `json:"next,omitempty"`
}

// Page sizes of GET /v1/kernels?limit=, in jobs.
const (
	DefaultJobsLimit = 1000
	MaxJobsLimit     = 10000
)

// Kernel is one entry of GET /v1/kernels.
type Kernel struct {
	Name      string   `json:"name"`
	SpecHash  string   `json:"spec_hash"`
	Source    string   `json:"source"` // spec file, or "builtin"
	Evaluator string   `json:"evaluator"`
	Schedule  string   `json:"schedule"`
	Objective string   `json:"objective"`
	Params    []string `json:"params"`
	Configs   int      `json:"configs"` // valid configs of the first problem's space
	Jobs      []Job    `json:"jobs"`
	// Notes are what an operator should know about the spec as loaded,
	// such as a default that violates the constraints and was replaced.
	Notes []string `json:"notes,omitempty"`
}

// Job is a kernel at one problem size on one device.
type Job struct {
	ID         string     `json:"id"`
	Problem    string     `json:"problem"`
	Device     string     `json:"device"`
	Trials     int        `json:"trials"`
	Served     *Config    `json:"served,omitempty"`
	Running    bool       `json:"running"`
	LastCycle  *time.Time `json:"last_cycle,omitempty"`
	NextCycle  *time.Time `json:"next_cycle,omitempty"`
	BudgetLeft int        `json:"budget_left,omitempty"`
	// Held says why the job was last given no evaluations when a cycle
	// could have started (a pipeline's budget split by influence gave it
	// none); empty once a cycle of it starts.
	Held string `json:"held,omitempty"`
	// Work is what one run of the job's kernel at its problem does, where
	// the evaluator knows (the builtin kernels do).
	Work *Work `json:"work,omitempty"`
	// Foreign marks a job this daemon does not tune: trials stored for
	// another device class or problem (imports, a former device). They are
	// listed, exported and warm-start the kernel's own jobs.
	Foreign bool `json:"foreign,omitempty"`
	// RequestedBy, for a job a lookup added (tune_on_miss, or a foreign
	// job holding the verification of a nearest answer's config at its
	// problem), is who asked: "uid 65534 (nobody)".
	RequestedBy string `json:"requested_by,omitempty"`
	// Prior is what the job's first cycle warm-started from; absent for a
	// cold start.
	Prior *Prior `json:"prior,omitempty"`
}

// Prior is what a job's warm start ranked its configs by.
type Prior struct {
	// From is the most trusted tier that knew the kernel: "pack" (a prior
	// pack, quasimd --priors), "store" (this daemon's trials of the kernel
	// on other devices or problems, imports included) or "fleet".
	From    string    `json:"from"`
	Sources []string  `json:"sources"` // the recordings or jobs, "PACK:RECORDING" for a pack's
	Ranked  int       `json:"ranked"`  // configs of the job's space the prior ranked
	At      time.Time `json:"at"`
}

// Match says where a config answer came from.
type Match string

// Match kinds.
const (
	MatchExact   Match = "exact"   // the served config of this very job
	MatchNearest Match = "nearest" // the served config of the nearest tuned problem size
	MatchDefault Match = "default" // nothing tuned: the spec's default
)

// Verification states of a nearest answer (Config.Verification); a
// refusal is "refused: " and why.
const (
	VerifyPending = "pending" // queued or running at this problem
	VerifyPassed  = "passed"  // verified and certified at this problem
	// VerifyTuning: the kernel tunes this problem itself (tune_on_miss
	// added a job for it): its cycles certify a config here, and the
	// answer turns exact once one is served.
	VerifyTuning = "tuning"
	// VerifyWaiting: the kernel's own job at this problem has served
	// nothing and no cycle of it runs; "waiting: " and when its next cycle
	// is.
	VerifyWaiting = "waiting: "
	VerifyRefused = "refused: "
)

// Speedup is a certified config's speed-up over a baseline config (the
// job's default): the geometric mean over paired rounds of the baseline's
// median time over the config's, with its 95% interval.
type Speedup struct {
	Baseline string  `json:"baseline"`
	Ratio    float64 `json:"ratio"`
	Low      float64 `json:"ci95_low"`
	High     float64 `json:"ci95_high"`
	Rounds   int     `json:"rounds"`
}

// Config is GET /v1/configs/{kernel}: the config a runtime should use.
type Config struct {
	Kernel  string         `json:"kernel"`
	Problem string         `json:"problem"`
	Device  string         `json:"device"`
	Config  map[string]any `json:"config"`
	Key     string         `json:"key"`
	Match   Match          `json:"match"`
	// TimeMS is the median of the config's certificate latency, measured
	// after it was selected and never by the search that selected it
	// (Trial.TimeMS is the search's), with that median's 95% interval.
	TimeMS       float64 `json:"time_ms,omitempty"`
	TimeCILowMS  float64 `json:"time_ci95_low_ms,omitempty"`
	TimeCIHighMS float64 `json:"time_ci95_high_ms,omitempty"`
	// Speedup is how many times faster the config ran than the default,
	// from rounds of the certification that measured the two in turn.
	Speedup     *Speedup `json:"speedup,omitempty"`
	DefaultMS   float64  `json:"default_ms,omitempty"`
	Certificate string   `json:"certificate"`
	SpecHash    string   `json:"spec_hash"`
	From        string   `json:"from_problem,omitempty"` // for nearest: the problem used
	// CertifiedFor is the problem Certificate was issued for. Only where it
	// equals Problem was the config verified at the size asked for; a
	// nearest answer's config is certified at From until the daemon has
	// verified it here (see Verification). Empty without a certificate.
	CertifiedFor string `json:"certified_for,omitempty"`
	// Verification is, for a nearest answer, where verifying its config at
	// Problem stands: VerifyPending, VerifyPassed (Certificate and TimeMS
	// are then this problem's, and DefaultMS, measured at From, is left
	// out), VerifyTuning, VerifyWaiting, or "refused: why" (it will not be verified
	// here). A config that fails is not answered again at this problem:
	// the answer falls back, and Note says why.
	Verification string     `json:"verification,omitempty"`
	Confidence   float64    `json:"confidence,omitempty"`
	Trial        *Trial     `json:"trial,omitempty"` // the trial that backs it
	PromotedAt   *time.Time `json:"promoted_at,omitempty"`
	Stale        string     `json:"stale,omitempty"` // why it is suspect, while a re-tune is queued
	// Front is how a lookup's policy (?objective=&max_slowdown=) chose
	// from the job's (time, energy) Pareto front of certified configs.
	Front *FrontChoice `json:"front,omitempty"`
	// Note says why a lookup's policy could not be applied.
	Note string `json:"note,omitempty"`
	// Source is SourceFleet for a config another node of the fleet
	// certified (Issuer names the key that signed Certificate;
	// Verification says where verifying it on this node stands); empty
	// for the daemon's own. A fleet config answered at another problem
	// and verified here carries this node's certificate of that check,
	// and Issuer names this node's key.
	Source string `json:"source,omitempty"`
	Issuer string `json:"issuer,omitempty"`
	// Zones are the kernel's stages in zoned pipelines (a pipeline file's
	// zoning section) whose map is tuned: the config and precisions the
	// chain's jointly tuned map gives it there.
	Zones []ZoneStage `json:"zones,omitempty"`
}

// SourceFleet is the Source of a config served from the fleet.
const SourceFleet = "fleet"

// FleetStatus is GET /v1/fleet: the daemon's part in a fleet of quasimd
// sharing certified configs. Enabled is false, and the rest empty, when
// the daemon runs alone.
type FleetStatus struct {
	Enabled   bool     `json:"enabled"`
	Fleet     string   `json:"fleet,omitempty"`
	Node      string   `json:"node,omitempty"` // this node's salted id in the fleet; empty until it joined
	Connected bool     `json:"connected"`
	Trusted   []string `json:"trusted,omitempty"` // key ids whose certificates are served
	Peers     int      `json:"peers"`             // other nodes seen publishing
	Received  int      `json:"configs_received"`  // trusted live offers held
	// Rejected counts the records left out, by why: untrusted,
	// tampered, malformed, not_passed.
	Rejected map[string]int `json:"rejected,omitempty"`
	// ServedFromFleet is the jobs served from the fleet now; Verified and
	// VerifyFailures count the local verifications of fleet configs.
	ServedFromFleet int `json:"served_from_fleet"`
	Verified        int `json:"verified"`
	VerifyFailures  int `json:"verification_failures"`
	Published       int `json:"published"` // records the fleet took from this node
	Waiting         int `json:"waiting"`   // records waiting to be published
	// Live says the node's view is in step with the fleet now; Synced is
	// when it last was (kept across restarts) and ViewAgeS how long ago,
	// 0 while live. Restored counts the offers and revocations the node
	// took from its state file at start (what it had verified before).
	Live     bool       `json:"live"`
	Synced   *time.Time `json:"synced,omitempty"`
	ViewAgeS float64    `json:"view_age_s"`
	Restored int        `json:"restored,omitempty"`
}

// Policy chooses from a job's (time, energy) front at lookup: the config
// that minimises Objective (time, energy, edp or a weighted sum) among
// those at most MaxSlowdown (a fraction; negative: no limit) slower than
// the fastest.
type Policy struct {
	Objective   string
	MaxSlowdown float64
}

// FrontChoice is the config a policy chose, against the front's fastest.
type FrontChoice struct {
	Objective       string   `json:"objective"`
	MaxSlowdown     *float64 `json:"max_slowdown,omitempty"`
	Points          int      `json:"points"` // certified configs on the front
	EnergyMJ        float64  `json:"energy_mj"`
	FastestKey      string   `json:"fastest_key"`
	FastestMS       float64  `json:"fastest_ms"`
	FastestEnergyMJ float64  `json:"fastest_energy_mj"`
	Slowdown        float64  `json:"slowdown"`     // chosen time / fastest time - 1
	EnergySaved     float64  `json:"energy_saved"` // 1 - chosen energy / fastest's energy
}

// Trial is one measured config.
type Trial struct {
	Key     string    `json:"key"`
	Status  string    `json:"status"`
	TimeMS  float64   `json:"time_ms,omitempty"`
	TimesMS []float64 `json:"times_ms,omitempty"`
	CostS   float64   `json:"cost_s"`
	Error   string    `json:"error,omitempty"`
	At      time.Time `json:"at"`
	Problem string    `json:"problem"`
	Device  string    `json:"device"`
	Cycle   int       `json:"cycle,omitempty"` // 0: imported
	// EnergyMJ is the energy of one run and PowerW the mean power while
	// measuring, where the device gave readings.
	EnergyMJ float64 `json:"energy_mj,omitempty"`
	PowerW   float64 `json:"power_w,omitempty"`
	// Throttle lists throttle reasons seen in the kept measurement, and
	// Remeasured how many throttled ones were thrown away.
	Throttle   []string `json:"throttle,omitempty"`
	Remeasured int      `json:"remeasured,omitempty"`
	// MaxTempC and SMClockMHz are the GPU's highest temperature and mean
	// SM clock while measuring, where it was metered.
	MaxTempC    float64 `json:"max_temp_c,omitempty"`
	SMClockMHz  float64 `json:"sm_clock_mhz,omitempty"`
	MemClockMHz float64 `json:"mem_clock_mhz,omitempty"`
	UtilPct     float64 `json:"util_pct,omitempty"`
	// PhasesMS is where a recorded measurement's wall time went, in ms,
	// under the FAIR T4 names of "times" (compilation, benchmark,
	// framework, search_algorithm, validation), as imported.
	PhasesMS map[string]float64 `json:"phases_ms,omitempty"`
	// Observables are other quantities recorded for the config (GFLOP/s,
	// GB/s, a score), by name, as imported.
	Observables map[string]float64 `json:"observables,omitempty"`
}

// Trials is one page of GET /v1/kernels/{kernel}/trials?limit=&cursor=:
// at most limit trials (DefaultTrialsLimit when not given, MaxTrialsLimit
// at most), job after job in insertion order. Next is the cursor of the
// page after it, to pass as cursor; empty on the last page.
type Trials struct {
	Kernel string `json:"kernel"`
	// Params names the kernel's parameters in key order, so a config key
	// of Trials reads as one value per parameter.
	Params []string `json:"params,omitempty"`
	Trials []Trial  `json:"trials"`
	Next   string   `json:"next,omitempty"`
}

// Page sizes of GET /v1/kernels/{kernel}/trials.
const (
	DefaultTrialsLimit = 1000
	MaxTrialsLimit     = 10000
)

// Cycle is one tuning run of a job.
type Cycle struct {
	ID      int        `json:"id"`
	Job     string     `json:"job"`
	Kernel  string     `json:"kernel"`
	Problem string     `json:"problem"`
	Device  string     `json:"device"`
	Trigger string     `json:"trigger"` // cron, start, api
	State   string     `json:"state"`   // running, waiting, interrupted, done, skipped, failed
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	Budget  int        `json:"budget"`
	BudgetS float64    `json:"budget_s,omitempty"`
	// Budgeted says how Budget was decided when not by the spec alone
	// (a pipeline's shared budget split by influence).
	Budgeted string  `json:"budgeted,omitempty"`
	Evals    int     `json:"evals"`
	BestKey  string  `json:"best_key,omitempty"`
	BestMS   float64 `json:"best_ms,omitempty"`
	Promoted string  `json:"promoted,omitempty"` // key promoted to served
	Error    string  `json:"error,omitempty"`
	Strategy string  `json:"strategy,omitempty"`
	// Allocation is how many of the cycle's evaluations each portfolio
	// member proposed.
	Allocation map[string]int `json:"allocation,omitempty"`
	// WaitedS is how long the cycle waited for its device to be idle of
	// other work, and Busy what it last found using the device.
	WaitedS float64 `json:"waited_s,omitempty"`
	Busy    string  `json:"busy,omitempty"`
	// Unsaved is true while the record is only in quasimd's memory: the
	// state file refused it (a full disk) and is written once it takes
	// writes again.
	Unsaved bool `json:"unsaved,omitempty"`
}

// Cycles is GET /v1/kernels/{kernel}/cycles.
type Cycles struct {
	Kernel string  `json:"kernel"`
	Cycles []Cycle `json:"cycles"`
}

// TuneRequest is the body of POST /v1/kernels/{kernel}/tune; every field is
// optional. An empty problem tunes every problem of the kernel.
type TuneRequest struct {
	Problem string `json:"problem,omitempty"`
	Budget  int    `json:"budget,omitempty"`
}

// TuneResponse names the cycles a tune request queued.
type TuneResponse struct {
	Kernel string   `json:"kernel"`
	Jobs   []string `json:"jobs"`
}

// ImportRequest is the body of POST /v1/kernels/{kernel}/import: recorded
// trials (say from a Kernel Tuner cache) for one problem and device.
type ImportRequest struct {
	Problem string  `json:"problem"`
	Device  string  `json:"device"`
	Trials  []Trial `json:"trials"`
}

// ImportResponse says what an import stored.
type ImportResponse struct {
	Job     string `json:"job"`
	Stored  int    `json:"stored"`
	Skipped int    `json:"skipped"` // keys not in the kernel's space, or already stored
}

// ReloadResponse is POST /v1/reload.
type ReloadResponse struct {
	Kernels   int      `json:"kernels"`
	Pipelines int      `json:"pipelines"`
	Errors    []string `json:"errors"`
}

// CertSummary is one entry of GET /v1/certs.
type CertSummary struct {
	ID        string     `json:"id"`
	Kernel    string     `json:"kernel"`
	Problem   string     `json:"problem"`
	Device    string     `json:"device"`
	Key       string     `json:"key"`
	TimeMS    float64    `json:"time_ms"` // certified median latency
	IssuedAt  time.Time  `json:"issued_at"`
	Issuer    string     `json:"issuer"`
	Served    bool       `json:"served"` // the served config of its job names it
	Revoked   bool       `json:"revoked"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Reason    string     `json:"reason,omitempty"`
}

// Certs is GET /v1/certs; ?kernel= filters.
type Certs struct {
	Certs []CertSummary `json:"certs"`
}

// RevokeRequest is the body of POST /v1/certs/{id}/revoke.
type RevokeRequest struct {
	Reason string `json:"reason"`
}

// RevokeResponse says what a revocation changed.
type RevokeResponse struct {
	ID       string `json:"id"`
	Job      string `json:"job"`
	Served   string `json:"served"`         // key now served for the job ("" = the default)
	Cert     string `json:"cert,omitempty"` // certificate of the config now served
	Requeued bool   `json:"requeued"`       // a re-verification cycle was queued
	// AlreadyRevoked: the certificate was revoked before; nothing changed
	// and nothing was queued.
	AlreadyRevoked bool  `json:"already_revoked,omitempty"`
	Match          Match `json:"match,omitempty"` // exact when a certified config is served, else default
}

// Pubkey is GET /v1/certs/pubkey.
type Pubkey struct {
	KeyID  string `json:"key_id"`
	Pubkey string `json:"pubkey"` // "ed25519:<base64>", what quasimctl certs verify --pubkey reads
}
