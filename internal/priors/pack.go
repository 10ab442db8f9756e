package priors

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// Format and Version name the pack's JSON layout.
const (
	Format  = "quasim-priors"
	Version = 1
)

// Pack is a prior pack.
type Pack struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Built   time.Time `json:"built"`
	Sources []Source  `json:"sources"`
}

// Source is one recording, ranked.
type Source struct {
	Name      string `json:"name"`
	Kernel    string `json:"kernel"`
	Device    string `json:"device,omitempty"`
	Problem   string `json:"problem,omitempty"`
	Objective string `json:"objective,omitempty"` // the recording's; empty: time
	// Maximized marks an objective where higher is better, a rate such as
	// GFLOP/s: ranked by its negation, it orders a problem's configs as
	// time does.
	Maximized    bool    `json:"maximized,omitempty"`
	SourceSHA256 string  `json:"source_sha256,omitempty"`
	Params       []Param `json:"params"`
	// Configs are the valid configs, best first, as value indices into
	// Params, one after the other (len(Params) values each: flat, so a
	// pack costs as little memory as its text); Quantiles their rank
	// quantiles, in the same order.
	Configs   []int32   `json:"configs"`
	Quantiles []float64 `json:"quantiles"`
	// Failed are the configs that did not run (compile, launch, invalid),
	// flat as Configs.
	Failed []int32 `json:"failed,omitempty"`
}

// Valid is the number of valid configs of s.
func (s *Source) Valid() int { return len(s.Quantiles) }

// NumFailed is the number of failed configs of s.
func (s *Source) NumFailed() int { return len(s.Failed) / max(1, len(s.Params)) }

// config returns config i of flat, as value indices.
func (s *Source) config(flat []int32, i int) genome.Config {
	n := len(s.Params)
	c := make(genome.Config, n)
	for j, v := range flat[i*n : (i+1)*n] {
		c[j] = int(v)
	}
	return c
}

// Param is a parameter of a source, its values in Python str form.
type Param struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Input is a recording to rank: its configs in space, and for each the
// objective value (lower is better: negate one to maximise) or a failure.
type Input struct {
	Name, Kernel, Device, Problem, Objective, SourceSHA256 string
	Maximized                                              bool // Objective is a rate, its values negated

	Space   *genome.Space
	Results []Result
}

// Result is one measured config of an Input.
type Result = evolve.Result

// NewSource ranks in. It fails when in measured no valid config.
func NewSource(in Input) (Source, error) {
	src := Source{Name: in.Name, Kernel: in.Kernel, Device: in.Device, Problem: in.Problem, Objective: in.Objective, Maximized: in.Maximized, SourceSHA256: in.SourceSHA256}
	for _, p := range in.Space.Params() {
		q := Param{Name: p.Name}
		for _, v := range p.Values {
			q.Values = append(q.Values, v.String())
		}
		src.Params = append(src.Params, q)
	}
	var ok, failed []Result
	for _, r := range in.Results {
		switch {
		case !r.OK:
			failed = append(failed, r)
		case math.IsNaN(r.Value) || math.IsInf(r.Value, 0):
			return Source{}, fmt.Errorf("%s: config %s: value %v", in.Name, in.Space.Key(r.Config), r.Value)
		default:
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return Source{}, fmt.Errorf("%s: no valid config measured", in.Name)
	}
	slices.SortStableFunc(ok, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Value, b.Value), slices.Compare(a.Config, b.Config))
	})
	for i, q := range evolve.RankQuantiles(ok) {
		src.Configs = appendConfig(src.Configs, ok[i].Config)
		src.Quantiles = append(src.Quantiles, math.Round(q*1e6)/1e6)
	}
	slices.SortFunc(failed, func(a, b Result) int { return slices.Compare(a.Config, b.Config) })
	for _, r := range failed {
		src.Failed = appendConfig(src.Failed, r.Config)
	}
	return src, nil
}

func appendConfig(flat []int32, c genome.Config) []int32 {
	for _, v := range c {
		flat = append(flat, int32(v))
	}
	return flat
}

// Encode writes p as gzipped JSON.
func Encode(w io.Writer, p *Pack) error {
	zw := gzip.NewWriter(w)
	if err := json.NewEncoder(zw).Encode(p); err != nil {
		return err
	}
	return zw.Close()
}

// Read decodes a pack from r, reading no more than MaxSize bytes of it.
func Read(r io.Reader) (*Pack, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// Decode reads a pack written by Encode (gzipped or not) and checks it:
// an error names the source and field at fault.
func Decode(data []byte) (*Pack, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("larger than %d MiB", MaxSize>>20)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, MaxSize+1)); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if len(data) > MaxSize {
			return nil, fmt.Errorf("larger than %d MiB unpacked", MaxSize>>20)
		}
	}
	var p Pack
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a prior pack: %w", err)
	}
	if p.Format != Format {
		return nil, fmt.Errorf("format: %q, want %q", p.Format, Format)
	}
	if p.Version != Version {
		return nil, fmt.Errorf("version: %d, this quasim reads %d", p.Version, Version)
	}
	for i := range p.Sources {
		if err := p.Sources[i].check(); err != nil {
			return nil, fmt.Errorf("sources[%d] (%s): %w", i, p.Sources[i].Name, err)
		}
	}
	return &p, nil
}

// MaxSize bounds a pack's size, unpacked: 40 times the 3 MiB that the
// benchmark hub's 10 recordings here take, and, as its configs are flat,
// at most about twice that in memory.
const MaxSize = 128 << 20

func (s *Source) check() error {
	if s.Kernel == "" && s.SourceSHA256 == "" {
		return errors.New("kernel: empty, and no source_sha256")
	}
	if len(s.Params) == 0 {
		return errors.New("params: none")
	}
	names := map[string]bool{}
	for i, p := range s.Params {
		if !genome.IsName(p.Name) || names[p.Name] {
			return fmt.Errorf("params[%d].name: %q is not a name, or repeated", i, p.Name)
		}
		names[p.Name] = true
		if len(p.Values) == 0 {
			return fmt.Errorf("params[%d] (%s).values: none", i, p.Name)
		}
	}
	n := len(s.Params)
	for field, flat := range map[string][]int32{"configs": s.Configs, "failed": s.Failed} {
		if len(flat)%n != 0 {
			return fmt.Errorf("%s: %d values, not a multiple of the %d params", field, len(flat), n)
		}
		for i, v := range flat {
			if v < 0 || int(v) >= len(s.Params[i%n].Values) {
				return fmt.Errorf("%s[%d] (config %d, %s): value index %d out of range", field, i, i/n, s.Params[i%n].Name, v)
			}
		}
	}
	if len(s.Configs)/n != len(s.Quantiles) {
		return fmt.Errorf("quantiles: %d for %d configs", len(s.Quantiles), len(s.Configs)/n)
	}
	last := 0.0
	for i, q := range s.Quantiles {
		if !(q >= last && q <= 1) {
			return fmt.Errorf("quantiles[%d]: %v, want ascending within [0, 1]", i, q)
		}
		last = q
	}
	if _, err := s.space(); err != nil {
		return err
	}
	return nil
}
