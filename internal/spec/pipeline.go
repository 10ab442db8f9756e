package spec

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quasim/quasim/evaluate"
)

// Retention bounds what the daemon keeps of one pipeline's spans: the
// newest batches, at most Spans spans and Batches batches in all.
type Retention struct {
	Spans   int `json:"spans"`
	Batches int `json:"batches"`
}

// Retention defaults and bounds. 100,000 spans are 100 iterations of a
// 1,000-span pipeline, and about 11 MB of JSON in the state file (108 bytes
// a span in daemon's BenchmarkSpans).
const (
	DefaultRetainSpans   = 100_000
	DefaultRetainBatches = 10_000
	MaxRetainSpans       = 1_000_000
	MaxRetainBatches     = 100_000
)

// Pipeline is a declared pipeline of kernels: runtimes may post its spans
// (POST /v1/spans) and the daemon profiles it (GET /v1/causal/{pipeline}).
// It is not modified after it is parsed.
type Pipeline struct {
	Name   string
	Source string // absolute file path
	// Kernels names the kernel specs whose launches the pipeline's spans
	// record (a span's kernel is a kernel spec's name); spans may name
	// other kernels too, which are profiled but have no job to tune.
	Kernels []string
	// BudgetByInfluence lets the daemon order and split the tuning budget
	// of the pipeline's kernels by their influence on its end-to-end time
	// (default true); false turns that off for this pipeline.
	BudgetByInfluence bool
	Retention         Retention
	// Zoning, when set, asks the daemon to tune the precision map of a
	// chain of the pipeline's kernels jointly, against one error budget
	// for the whole chain.
	Zoning *Zoning
	Raw    []byte // the file's bytes
}

// Zoning is a pipeline's zoning section: Chain names kernel specs of the
// pipeline in data-flow order, each one's output the next one's input;
// ErrorBudget bounds the error of the chain's output against the float64
// reference of the whole chain (abs or rel); Inputs is the sign of the
// seeded inputs it is checked on (signed or positive).
type Zoning struct {
	Chain       []string    `json:"chain"`
	ErrorBudget ErrorBudget `json:"error_budget"`
	Inputs      string      `json:"inputs,omitempty"`
}

// ZoningChainLen is how many kernels a chain holds: an upstream kernel
// and the reduce it feeds.
const ZoningChainLen = 2

// pipelineKeys are the keys a pipeline file may hold, in the order they
// are checked.
var pipelineKeys = []string{"pipeline", "kernels", "budget_by_influence", "retention", "zoning"}

// isPipeline reports whether a parsed file declares a pipeline: a mapping
// with the key "pipeline".
func isPipeline(root *node) bool {
	return root != nil && root.kind == nMap && root.get("pipeline") != nil
}

// ParsePipeline reads one pipeline file (.yaml, .yml or .json); path names
// it in errors. Every error is a *FieldError naming the file and the field.
func ParsePipeline(path string, data []byte) (*Pipeline, error) {
	root, err := parseTree(path, data)
	if err != nil {
		return nil, err
	}
	return decodePipeline(path, data, root)
}

// parseTree parses a spec file by its extension.
func parseTree(path string, data []byte) (*node, error) {
	var (
		root *node
		err  error
	)
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		root, err = yamlTree(data)
	case ".json":
		root, err = jsonTree(data)
	default:
		return nil, &FieldError{File: path, Err: fmt.Errorf("unknown file type %q (want .yaml, .yml or .json)", ext)}
	}
	if err != nil {
		return nil, &FieldError{File: path, Err: err}
	}
	return root, nil
}

func decodePipeline(path string, data []byte, root *node) (*Pipeline, error) {
	d := decoder{file: path}
	p := &Pipeline{Source: path, Raw: bytes.Clone(data), BudgetByInfluence: true,
		Retention: Retention{Spans: DefaultRetainSpans, Batches: DefaultRetainBatches}}
	if abs, err := filepath.Abs(path); err == nil {
		p.Source = abs
	}
	if root.kind != nMap {
		return nil, d.errf("", root, "want a mapping of pipeline keys, got %s", describe(root))
	}
	if err := d.knownKeys("", root, pipelineKeys); err != nil {
		return nil, err
	}
	field := func(key string) *node {
		if n := root.get(key); !n.isNull() {
			return n
		}
		return nil
	}
	n := field("pipeline")
	if n == nil {
		return nil, d.errf("pipeline", nil, "missing (want [A-Za-z0-9_.-]+)")
	}
	name, err := d.str("pipeline", n)
	if err != nil {
		return nil, err
	}
	if err := validName(name); err != nil {
		return nil, d.wrap("pipeline", n, err)
	}
	p.Name = name

	if n = field("kernels"); n != nil {
		items, err := d.list("kernels", n)
		if err != nil {
			return nil, err
		}
		seen := map[string]int{}
		for i, it := range items {
			f := fmt.Sprintf("kernels[%d]", i)
			k, err := d.str(f, it)
			if err != nil {
				return nil, err
			}
			if err := validName(k); err != nil {
				return nil, d.wrap(f, it, err)
			}
			if j, dup := seen[k]; dup {
				return nil, d.errf(f, it, "%q is also kernels[%d]", k, j)
			}
			seen[k] = i
			p.Kernels = append(p.Kernels, k)
		}
	}
	if n = field("budget_by_influence"); n != nil {
		if p.BudgetByInfluence, err = d.boolean("budget_by_influence", n); err != nil {
			return nil, err
		}
	}
	if n = field("retention"); n != nil {
		if err := p.decodeRetention(d, n); err != nil {
			return nil, err
		}
	}
	if n = field("zoning"); n != nil {
		if err := p.decodeZoning(d, n); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// decodeZoning reads the zoning section: a chain of kernels named in
// kernels, each once, and a budget of abs or rel.
func (p *Pipeline) decodeZoning(d decoder, n *node) error {
	m, err := d.mapping("zoning", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("zoning", m, []string{"chain", "error_budget", "inputs"}); err != nil {
		return err
	}
	z := &Zoning{}
	c := m.get("chain")
	if c.isNull() {
		return d.errf("zoning.chain", nil, "missing (want the kernels in data-flow order, e.g. [conv2d, reduce])")
	}
	items, err := d.list("zoning.chain", c)
	if err != nil {
		return err
	}
	if len(items) != ZoningChainLen {
		return d.errf("zoning.chain", c, "%d kernels: want %d (a kernel and the reduce it feeds)", len(items), ZoningChainLen)
	}
	for i, it := range items {
		f := fmt.Sprintf("zoning.chain[%d]", i)
		k, err := d.str(f, it)
		if err != nil {
			return err
		}
		if !slices.Contains(p.Kernels, k) {
			return d.errf(f, it, "%q is not one of kernels %v", k, p.Kernels)
		}
		if slices.Contains(z.Chain, k) {
			return d.errf(f, it, "%q is in the chain twice", k)
		}
		z.Chain = append(z.Chain, k)
	}
	b := m.get("error_budget")
	if b.isNull() {
		return d.errf("zoning.error_budget", nil, "missing (want {rel: X} or {abs: X})")
	}
	if z.ErrorBudget, err = decodeBudget(d, "zoning.error_budget", b); err != nil {
		return err
	}
	if z.ErrorBudget.ULP > 0 {
		return d.errf("zoning.error_budget.ulp", b.get("ulp"), "a chain's budget is rel or abs")
	}
	if v := m.get("inputs"); !v.isNull() {
		str, err := d.str("zoning.inputs", v)
		if err != nil {
			return err
		}
		if str != evaluate.InputsSigned && str != evaluate.InputsPositive {
			return d.errf("zoning.inputs", v, "%q: want %s or %s", str, evaluate.InputsSigned, evaluate.InputsPositive)
		}
		z.Inputs = str
	}
	p.Zoning = z
	return nil
}

func (p *Pipeline) decodeRetention(d decoder, n *node) error {
	m, err := d.mapping("retention", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("retention", m, []string{"spans", "batches"}); err != nil {
		return err
	}
	bound := func(key string, most int, dst *int) error {
		v := m.get(key)
		if v.isNull() {
			return nil
		}
		f := "retention." + key
		x, err := d.integer(f, v)
		if err != nil {
			return err
		}
		if x < 1 || x > int64(most) {
			return d.errf(f, v, "%d out of range (want 1 to %d)", x, most)
		}
		*dst = int(x)
		return nil
	}
	if err := bound("spans", MaxRetainSpans, &p.Retention.Spans); err != nil {
		return err
	}
	return bound("batches", MaxRetainBatches, &p.Retention.Batches)
}
