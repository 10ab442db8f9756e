package spec

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/genome"
)

// canonicalSpec is the normalised spec that Hash covers. Its JSON keys are
// the spec file's, so the canonical JSON of a YAML/JSON spec is itself a
// spec file that parses to the same hash.
type canonicalSpec struct {
	Name        string            `json:"name"`
	Evaluator   string            `json:"evaluator,omitempty"`
	Objective   string            `json:"objective"`
	Problems    [][]int           `json:"problems,omitempty"`
	ProblemDims []string          `json:"problem_dims,omitempty"`
	Parameters  map[string][]any  `json:"parameters,omitempty"`
	Constraints []string          `json:"constraints,omitempty"`
	Schedule    string            `json:"schedule"`
	Budget      Budget            `json:"budget"`
	Default     map[string]any    `json:"default,omitempty"`
	Verify      *Verify           `json:"verify,omitempty"`
	TuneOnMiss  bool              `json:"tune_on_miss,omitempty"`
	OnMiss      *OnMiss           `json:"on_miss,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	Precision   map[string]string `json:"precision,omitempty"`
	T1          *canonicalT1      `json:"t1,omitempty"`
	OpenCL      *canonicalOpenCL  `json:"opencl,omitempty"`
}

// canonicalOpenCL is an opencl spec's kernel and its sources' digests, so
// an edited kernel is a new spec version.
type canonicalOpenCL struct {
	Kernel  *opencl.Kernel `json:"kernel"`
	Sources []string       `json:"sources_sha256"`
}

// canonicalT1 is the space of a FAIR T1 file.
type canonicalT1 struct {
	Name        string           `json:"name"`
	Params      []canonicalParam `json:"params"`
	Constraints []string         `json:"constraints,omitempty"`
	ProblemSize []int            `json:"problem_size,omitempty"`
}

type canonicalParam struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Values  []any  `json:"values"`
	Default int    `json:"default"`
}

// native is v as a JSON value.
func native(v genome.Value) any {
	switch v.Kind {
	case genome.KindInt:
		return v.I
	case genome.KindFloat:
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return genome.PyFloat(v.F) // JSON has no NaN or Inf
		}
		return v.F
	case genome.KindBool:
		return v.I != 0
	}
	return v.S
}

// compareValues orders numbers by value before strings.
func compareValues(a, b genome.Value) int {
	fa, na := a.Float64()
	fb, nb := b.Float64()
	switch {
	case na && nb:
		if c := cmp.Compare(fa, fb); c != 0 {
			return c
		}
		return cmp.Compare(a.Kind, b.Kind)
	case na:
		return -1
	case nb:
		return 1
	}
	return cmp.Compare(a.S, b.S)
}

// canonical returns the canonical JSON of s: every key sorted, defaults
// filled, narrowing values sorted, no HTML escaping.
func (s *Spec) canonical() []byte {
	c := canonicalSpec{
		Name:        s.Name,
		Evaluator:   s.Evaluator,
		Objective:   s.Objective,
		ProblemDims: s.ProblemDims,
		Constraints: s.Constraints,
		Schedule:    s.Schedule,
		Budget:      s.Budget,
		TuneOnMiss:  s.TuneOnMiss,
		Timeout:     durationString(s.Timeout),
	}
	for _, p := range s.Problems {
		c.Problems = append(c.Problems, p.Dims)
	}
	if len(s.Params) > 0 {
		c.Parameters = make(map[string][]any, len(s.Params))
		for name, vals := range s.Params {
			sorted := slices.Clone(vals)
			slices.SortStableFunc(sorted, compareValues)
			out := make([]any, len(sorted))
			for i, v := range sorted {
				out[i] = native(v)
			}
			c.Parameters[name] = out
		}
	}
	if len(s.Precision) > 0 {
		c.Precision = make(map[string]string, len(s.Precision))
		for name, st := range s.Precision {
			c.Precision[name] = st.String()
		}
	}
	if len(s.Default) > 0 {
		c.Default = make(map[string]any, len(s.Default))
		for name, v := range s.Default {
			c.Default[name] = native(v)
		}
	}
	if !s.OnMiss.isZero() {
		o := s.OnMiss
		c.OnMiss = &o
	}
	if s.Verify != (Verify{}) {
		v := s.Verify
		c.Verify = &v
	}
	if s.OpenCL != nil {
		c.OpenCL = &canonicalOpenCL{Kernel: s.OpenCL, Sources: s.openclSums}
	}
	if t := s.T1; t != nil {
		ct := &canonicalT1{Name: t.Name, Constraints: t.Constraints, ProblemSize: t.ProblemSize}
		for _, p := range t.Params {
			cp := canonicalParam{Name: p.Name, Kind: p.Kind.String(), Default: p.Default}
			for _, v := range p.Values {
				cp.Values = append(cp.Values, native(v))
			}
			ct.Params = append(ct.Params, cp)
		}
		c.T1 = ct
	}
	return sortedJSON(c)
}

// sortedJSON marshals v with every object's keys sorted: through a generic
// value, since encoding/json sorts map keys but keeps struct field order.
func sortedJSON(v any) []byte {
	b := marshal(v)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		panic("spec: canonical JSON does not decode: " + err.Error())
	}
	return marshal(g)
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only NaN or Inf could fail, and decode rejects them.
		panic("spec: canonical JSON: " + err.Error())
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// hash is the spec's Hash: see the package doc.
func (s *Spec) hash() string { return hashBytes(s.canonical()) }

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Canonical returns the canonical JSON that Hash is computed over.
func (s *Spec) Canonical() []byte { return s.canonical() }

// SourceSHA256 identifies the source of a kernel tuned from source: the
// SHA-256 of its one source file, or of its files' SHA-256s joined by
// newlines when it has several; empty for other kernels.
func (s *Spec) SourceSHA256() string { return SourceHash(s.openclSums) }

// SourceHash is Spec.SourceSHA256 of sources whose SHA-256s (hex) are
// sums, in order: for prior packs built outside a spec.
func SourceHash(sums []string) string {
	switch len(sums) {
	case 0:
		return ""
	case 1:
		return sums[0]
	}
	h := sha256.Sum256([]byte(strings.Join(sums, "\n")))
	return hex.EncodeToString(h[:])
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
