package api

import (
	"strings"
	"time"
)

// Routes of a pipeline's precision zoning (see Zoning). Keep the whole
// route list sorted by path.
const (
	RoutePipelineZoning = "GET /v1/pipelines/{pipeline}/zoning"
	RoutePipelineRezone = "POST /v1/pipelines/{pipeline}/zoning"
)

// The states of a pipeline's zoning.
const (
	ZoningTuning = "tuning" // the maps are being checked and timed
	ZoningDone   = "done"   // Map is the certified map (nil when none fits)
	ZoningFailed = "failed" // Error says why
)

// Zoning is GET /v1/pipelines/{pipeline}/zoning: the precision map of a
// pipeline's chain of kernels (its zoning section), tuned jointly against
// one error budget for the chain's output. Every combination of the
// kernels' precision parameters, their other parameters at the kernels'
// served configs, was bounded a priori (the upstream's error passes
// through the downstream sum and adds to its own bound), measured against
// the float64 reference of the whole chain on seeded inputs, and timed;
// Map is the fastest map both of whose errors fit the budget.
type Zoning struct {
	Pipeline string `json:"pipeline"`
	State    string `json:"state"`
	// Error says why it failed; with State done and a Map, why a tuning
	// again failed (that map stays served).
	Error   string    `json:"error,omitempty"`
	Chain   []string  `json:"chain"`  // kernel specs, in data-flow order
	Budget  Budget    `json:"budget"` // the chain's error budget
	Inputs  string    `json:"inputs"` // signed or positive seeded inputs
	Seeds   []uint64  `json:"seeds,omitempty"`
	Maps    int       `json:"maps"`      // precision maps checked
	Passed  int       `json:"certified"` // maps whose bound and measured error fit
	Map     *ZoneMap  `json:"map"`       // the certified map served; nil when none fits
	Default *ZoneMap  `json:"default,omitempty"`
	Split   *ZoneMap  `json:"even_split,omitempty"` // the fastest map within half the budget per kernel; nil when none
	TunedAt time.Time `json:"tuned_at,omitzero"`
	// Certificate is the signed certificate of Map, its canonical JSON
	// (certs.Certificate.Encode) held as a string so its bytes stay the
	// ones signed: its error_budget check records each stage's format and
	// bound, the composed bound and the measured error. Empty when Map is
	// nil.
	Certificate string `json:"certificate,omitempty"`
	// CertificateID is Certificate's id: it is in the certificate store
	// (GET /v1/certs/{id}, quasimctl certs), under kernel
	// pipeline/<pipeline>.
	CertificateID string   `json:"certificate_id,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	// Revoked are the keys of the maps whose certificate was revoked (a
	// runtime observed an error above a stage's certified bound, or an
	// operator revoked it), kernel and config per stage joined by " | ":
	// none of them is served or certified again.
	Revoked []string `json:"revoked,omitempty"`
	// Restored says the map was read from the state file at start, tuned
	// against the same zoning section and served configs, not measured
	// again.
	Restored bool `json:"restored,omitempty"`
}

// Budget is an error budget: Kind rel or abs, Value > 0.
type Budget struct {
	Kind  string  `json:"kind"`
	Value float64 `json:"value"`
}

// ZoneMap is one precision map of a chain: its stages, the composed
// a-priori bound and the largest measured error (both in the budget's
// units), and the chain's time, its stages' added.
type ZoneMap struct {
	Stages   []ZoneStage `json:"stages"`
	Bound    float64     `json:"bound"`
	Measured float64     `json:"measured_err"`
	TimeMS   float64     `json:"time_ms"`
}

// Key names m as its certificate's key and Zoning.Revoked do: each
// stage's kernel and config, joined by " | ".
func (m *ZoneMap) Key() string {
	keys := make([]string, len(m.Stages))
	for i, st := range m.Stages {
		keys[i] = st.Kernel + " " + st.Key
	}
	return strings.Join(keys, " | ")
}

// ZoneStage is one kernel of a zoned chain: the config it runs at (its
// served config's other parameters, the map's precisions) and its share
// of the composed bound. In a config lookup's Zones, Pipeline names the
// chain's pipeline.
type ZoneStage struct {
	Pipeline  string            `json:"pipeline,omitempty"`
	Kernel    string            `json:"kernel"`
	Problem   string            `json:"problem"`
	Key       string            `json:"key"`
	Precision map[string]string `json:"precision"`
	Bound     float64           `json:"bound"` // budget units
	// Limit is what a runtime checks this stage's output against, in
	// Unit: for the upstream (Unit abs), any one output's absolute error
	// against its float64 reference on the same inputs; for the reduce
	// (Unit the chain budget's kind), its error against the float64 sum
	// of the values it received (rel: relative to that sum). A runtime
	// reports it as an observation's error for the kernel at Problem and
	// Key; it counts only when the unit of that kernel's job (its
	// verify.error_budget kind) is Unit. Above Limit, the map's
	// certificate is revoked.
	Limit  float64      `json:"limit"`
	Unit   string       `json:"unit"`
	TimeMS float64      `json:"time_ms"`
	Parts  []StageBound `json:"parts,omitempty"`
}

// StageBound is a kernel's own bound at one precision stage, absolute.
type StageBound struct {
	Stage   string  `json:"stage"`
	Param   string  `json:"param,omitempty"`
	Value   string  `json:"value"`
	Bound   float64 `json:"bound"`
	Formula string  `json:"formula,omitempty"`
}
