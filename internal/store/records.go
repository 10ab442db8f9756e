package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// recordVersion is the "v" every JSON value is written with.
const recordVersion = 1

// Spec is a kernel spec as loaded.
type Spec struct {
	Name   string    `json:"name"`
	Hash   string    `json:"hash"`
	Source string    `json:"source"` // file path, or "builtin"
	Raw    []byte    `json:"raw"`    // the spec as loaded
	Loaded time.Time `json:"loaded"`
}

// Trial is one measured config of a job.
type Trial struct {
	Key     string    `json:"key"`
	Status  string    `json:"status"`
	TimeMS  float64   `json:"time_ms,omitempty"`
	TimesMS []float64 `json:"times_ms,omitempty"`
	CostS   float64   `json:"cost_s"`
	Error   string    `json:"error,omitempty"`
	At      time.Time `json:"at"`
	Cycle   int       `json:"cycle,omitempty"` // 0 = imported
	// Energy of one run and mean power; 0 when not measured.
	EnergyMJ float64 `json:"energy_mj,omitempty"`
	PowerW   float64 `json:"power_w,omitempty"`
	// Throttle reasons seen in the measurement kept, and how many
	// throttled measurements were thrown away before it.
	Throttle   []string `json:"throttle,omitempty"`
	Remeasured int      `json:"remeasured,omitempty"`
	// Highest device temperature and mean SM clock while measuring.
	MaxTempC    float64 `json:"max_temp_c,omitempty"`
	SMClockMHz  float64 `json:"sm_clock_mhz,omitempty"`
	MemClockMHz float64 `json:"mem_clock_mhz,omitempty"`
	UtilPct     float64 `json:"util_pct,omitempty"`
	// PhasesMS (compilation, benchmark, ... in ms, by FAIR T4 name) and
	// Observables (GFLOP/s, ...) are kept from imported recordings.
	PhasesMS    map[string]float64 `json:"phases_ms,omitempty"`
	Observables map[string]float64 `json:"observables,omitempty"`
}

// Cycle is one tuning run of a job.
type Cycle struct {
	ID      int       `json:"id"`      // assigned by NewCycle, 1-based per job
	Trigger string    `json:"trigger"` // cron, start, api
	State   string    `json:"state"`   // running, waiting, interrupted, done, skipped, failed
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Budget  int       `json:"budget"`
	BudgetS float64   `json:"budget_s,omitempty"`
	// Budgeted says how Budget was decided when not by the spec alone.
	Budgeted string  `json:"budgeted,omitempty"`
	Evals    int     `json:"evals"`
	BestKey  string  `json:"best_key,omitempty"`
	BestMS   float64 `json:"best_ms,omitempty"`
	Promoted string  `json:"promoted,omitempty"`
	Strategy string  `json:"strategy,omitempty"`
	Error    string  `json:"error,omitempty"`
	// Allocation is how many of this cycle's evaluations each member of a
	// portfolio proposed ("design" for its own design and warm start).
	Allocation map[string]int `json:"allocation,omitempty"`
	// WaitedS is how long the cycle waited for its device to be idle of
	// other work; Busy says what it last found using it.
	WaitedS float64 `json:"waited_s,omitempty"`
	Busy    string  `json:"busy,omitempty"`
}

// Served is the config a job serves: its best certified one.
type Served struct {
	Key string `json:"key"`
	// TimeMS is the median of its certificate's latency, measured after
	// it was selected (never the search's time), with that median's 95%
	// interval; Speedup is over the default, from the same rounds.
	TimeMS      float64   `json:"time_ms"`
	CILowMS     float64   `json:"ci95_low_ms,omitempty"`
	CIHighMS    float64   `json:"ci95_high_ms,omitempty"`
	Speedup     *Speedup  `json:"speedup,omitempty"`
	Cycle       int       `json:"cycle"`
	PromotedAt  time.Time `json:"promoted_at"`
	Certificate string    `json:"certificate,omitempty"`
	// Stale says why the served config is suspect (drift seen by runtimes)
	// and a re-tune is queued; empty when it is not. A promotion clears it.
	Stale   string    `json:"stale,omitempty"`
	StaleAt time.Time `json:"stale_at,omitzero"`
	// Front is the job's (time, energy) Pareto front of certified
	// configs, fastest first; empty when the job has no energy readings.
	Front []FrontPoint `json:"front,omitempty"`
}

// FrontPoint is one certified config on a job's Pareto front.
type FrontPoint struct {
	Key         string  `json:"key"`
	TimeMS      float64 `json:"time_ms"`
	EnergyMJ    float64 `json:"energy_mj"`
	Certificate string  `json:"certificate"`
}

// Speedup is how many times faster a certified config ran than Baseline
// (the job's default), from rounds that measured the two in turn, with
// the ratio's 95% interval.
type Speedup struct {
	Baseline string  `json:"baseline"`
	Ratio    float64 `json:"ratio"`
	Low      float64 `json:"ci95_low"`
	High     float64 `json:"ci95_high"`
	Rounds   int     `json:"rounds"`
}

// CertMeta is what the store knows about a certificate besides its signed bytes.
type CertMeta struct {
	ID        string    `json:"id"`
	Job       JobKey    `json:"-"`       // filled on read from the job index
	Key       string    `json:"key"`     // config key it certifies
	TimeMS    float64   `json:"time_ms"` // certified median latency
	CILowMS   float64   `json:"ci95_low_ms,omitempty"`
	CIHighMS  float64   `json:"ci95_high_ms,omitempty"`
	Speedup   *Speedup  `json:"speedup,omitempty"`
	IssuedAt  time.Time `json:"issued_at"`
	Revoked   bool      `json:"revoked"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	Reason    string    `json:"reason,omitempty"`
}

// Observation is a latency a runtime saw for a job's config.
type Observation struct {
	At        time.Time `json:"at"`
	LatencyMS float64   `json:"latency_ms"`
	Key       string    `json:"key"`
	Source    string    `json:"source,omitempty"`
}

// The stored forms: each public type with the "v" field in front.
type (
	specRecord struct {
		V int `json:"v"`
		Spec
	}
	trialRecord struct {
		V int `json:"v"`
		Trial
	}
	cycleRecord struct {
		V int `json:"v"`
		Cycle
	}
	servedRecord struct {
		V int `json:"v"`
		Served
	}
	observationRecord struct {
		V int `json:"v"`
		Observation
	}
	// certRecord is a certificate: its metadata without the revocation,
	// which lives in the revocations bucket, its job and its signed bytes
	// (base64 in JSON, so they come back byte for byte).
	certRecord struct {
		V    int      `json:"v"`
		Meta certInfo `json:"meta"`
		Job  string   `json:"job"`
		Body []byte   `json:"body"`
	}
	// certInfo is the part of CertMeta a certRecord holds.
	certInfo struct {
		ID       string    `json:"id"`
		Key      string    `json:"key"`
		TimeMS   float64   `json:"time_ms"`
		CILowMS  float64   `json:"ci95_low_ms,omitempty"`
		CIHighMS float64   `json:"ci95_high_ms,omitempty"`
		Speedup  *Speedup  `json:"speedup,omitempty"`
		IssuedAt time.Time `json:"issued_at"`
	}
	revocationRecord struct {
		V         int       `json:"v"`
		Reason    string    `json:"reason"`
		RevokedAt time.Time `json:"revoked_at"`
	}
	jobRecord struct {
		V        int       `json:"v"`
		Kernel   string    `json:"kernel"`
		SpecHash string    `json:"spec_hash"`
		Problem  string    `json:"problem"`
		Device   string    `json:"device"`
		Created  time.Time `json:"created"`
		// RequestedBy is who asked for a job a lookup added; optional, so
		// records without it stay valid.
		RequestedBy *Requester `json:"requested_by,omitempty"`
		// Prior is what the job's warm start ranked its configs by;
		// optional, as RequestedBy.
		Prior *Prior `json:"prior,omitempty"`
	}
)

// record is a stored form; version returns its "v".
type record interface{ version() int }

func (r *specRecord) version() int        { return r.V }
func (r *trialRecord) version() int       { return r.V }
func (r *cycleRecord) version() int       { return r.V }
func (r *servedRecord) version() int      { return r.V }
func (r *observationRecord) version() int { return r.V }
func (r *jobRecord) version() int         { return r.V }
func (r *certRecord) version() int        { return r.V }
func (r *revocationRecord) version() int  { return r.V }

// encode marshals a stored form; a value JSON cannot hold (NaN, say) is
// ErrInvalid.
func encode(rec record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode: %w: %v", ErrInvalid, err)
	}
	return b, nil
}

// decode unmarshals data into rec and checks its "v"; any failure is
// ErrCorrupt, naming where the data came from. It never panics.
func decode(data []byte, rec record, where string) error {
	if err := json.Unmarshal(data, rec); err != nil {
		return fmt.Errorf("decode %s: %w: %v", where, ErrCorrupt, err)
	}
	if v := rec.version(); v != recordVersion {
		return fmt.Errorf("decode %s: %w: record version %d, want %d", where, ErrCorrupt, v, recordVersion)
	}
	return nil
}

func decodeSpec(data []byte, where string) (Spec, error) {
	var r specRecord
	err := decode(data, &r, where)
	return r.Spec, err
}

func decodeTrial(data []byte, where string) (Trial, error) {
	var r trialRecord
	err := decode(data, &r, where)
	return r.Trial, err
}

func decodeCycle(data []byte, where string) (Cycle, error) {
	var r cycleRecord
	err := decode(data, &r, where)
	return r.Cycle, err
}

func decodeServed(data []byte, where string) (Served, error) {
	var r servedRecord
	err := decode(data, &r, where)
	return r.Served, err
}

func decodeObservation(data []byte, where string) (Observation, error) {
	var r observationRecord
	err := decode(data, &r, where)
	return r.Observation, err
}

func decodeJob(data []byte, where string) (jobRecord, error) {
	var r jobRecord
	err := decode(data, &r, where)
	return r, err
}

func decodeCert(data []byte, where string) (certRecord, error) {
	var r certRecord
	err := decode(data, &r, where)
	return r, err
}

func decodeRevocation(data []byte, where string) (revocationRecord, error) {
	var r revocationRecord
	err := decode(data, &r, where)
	return r, err
}
