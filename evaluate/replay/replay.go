package replay

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// Recording is a recorded search space: every config that was measured and
// what was measured for it. It implements evaluate.Evaluator by replaying.
type Recording struct {
	Name    string // file name without .json / .json.gz
	Kernel  string // kernel name as recorded, if any
	Problem []int  // problem size as recorded, if any
	device  string
	space   *genome.Space
	trials  map[string]evaluate.Trial // by config key
	optimum float64
	best    string

	frameworkMS float64 // sum of the framework time recorded per config
	framework   int     // configs that recorded one
}

// maxFileSize bounds what Load reads, compressed or not, so a bad file
// cannot exhaust memory.
const maxFileSize = 1 << 30

// Load reads a Kernel Tuner cache file (.json or .json.gz) or a FAIR T4
// results file (plain or gzipped).
func Load(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return Parse(path, data)
}

// SpaceName is a recording's name as derived from its path: the base name
// without .json or .json.gz.
func SpaceName(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, ".gz")
	return strings.TrimSuffix(base, ".json")
}

// Parse reads a recording from data; path names it in errors. The format is
// told by content: a top-level "cache" is Kernel Tuner, "results" is FAIR T4.
func Parse(path string, data []byte) (*Recording, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var (
		rec *Recording
		err error
	)
	switch {
	case probe["cache"] != nil:
		rec, err = parseCache(path, data)
	case probe["results"] != nil:
		rec, err = parseT4(path, data)
	default:
		return nil, fmt.Errorf("%s: neither a Kernel Tuner cache (no \"cache\") nor FAIR T4 results (no \"results\")", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rec.Name = SpaceName(path)
	return rec, nil
}

type cacheFile struct {
	DeviceName     string                     `json:"device_name"`
	KernelName     string                     `json:"kernel_name"`
	ProblemSize    json.RawMessage            `json:"problem_size"`
	TuneParamsKeys []string                   `json:"tune_params_keys"`
	TuneParams     map[string][]any           `json:"tune_params"`
	Cache          map[string]json.RawMessage `json:"cache"`
}

type cacheEntry struct {
	Time          any       `json:"time"`
	Times         []float64 `json:"times"`
	CompileTime   float64   `json:"compile_time"`
	BenchmarkTime float64   `json:"benchmark_time"`
	FrameworkTime float64   `json:"framework_time"`
	// Kernel Tuner's NVML observer: energy of one run in J, mean power in W.
	NVMLEnergy *float64 `json:"nvml_energy"`
	NVMLPower  *float64 `json:"nvml_power"`
}

func parseCache(path string, data []byte) (*Recording, error) {
	var f cacheFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.TuneParamsKeys) == 0 {
		return nil, errors.New("tune_params_keys: missing or empty")
	}
	params := make([]genome.Param, len(f.TuneParamsKeys))
	for i, name := range f.TuneParamsKeys {
		raw, ok := f.TuneParams[name]
		if !ok {
			return nil, fmt.Errorf("tune_params: no values for %q", name)
		}
		vals, kind, err := values(raw, false)
		if err != nil {
			return nil, fmt.Errorf("tune_params[%q]: %w", name, err)
		}
		params[i] = genome.Param{Name: name, Kind: kind, Values: vals}
	}
	keys := make([]string, 0, len(f.Cache))
	for k := range f.Cache {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	space, err := genome.NewSpace(params, genome.SpaceOptions{Domain: keys})
	if err != nil {
		return nil, err
	}
	rec := &Recording{
		Kernel:  f.KernelName,
		Problem: problemSize(f.ProblemSize),
		device:  deviceClass(f.DeviceName),
		space:   space,
		trials:  make(map[string]evaluate.Trial, len(keys)),
	}
	for _, k := range keys {
		var e cacheEntry
		if err := json.Unmarshal(f.Cache[k], &e); err != nil {
			return nil, fmt.Errorf("cache[%q]: %w", k, err)
		}
		st, t, err := cacheStatus(e.Time)
		if err != nil {
			return nil, fmt.Errorf("cache[%q]: time: %w", k, err)
		}
		tr := evaluate.Trial{
			Key:    k,
			Status: st,
			Time:   t,
			Times:  e.Times,
			Cost:   (e.CompileTime + e.BenchmarkTime + e.FrameworkTime) / 1000,
			Device: rec.device,
		}
		for _, c := range []struct {
			name string
			v    *float64
		}{{"nvml_energy", e.NVMLEnergy}, {"nvml_power", e.NVMLPower}} {
			if c.v != nil && !(*c.v > 0 && !math.IsInf(*c.v, 0)) && st == evaluate.StatusOK {
				return nil, fmt.Errorf("cache[%q]: %s: %v is not a positive number", k, c.name, *c.v)
			}
		}
		if st == evaluate.StatusOK {
			if e.NVMLPower != nil {
				tr.PowerW = *e.NVMLPower
			}
			switch {
			case e.NVMLEnergy != nil:
				tr.EnergyMJ = *e.NVMLEnergy * 1000
			case e.NVMLPower != nil:
				tr.EnergyMJ = *e.NVMLPower * t // W × ms = mJ
			}
		}
		rec.add(tr)
		if e.FrameworkTime > 0 {
			rec.frameworkMS += e.FrameworkTime
			rec.framework++
		}
	}
	return rec, nil
}

// cacheStatus maps a cache entry's time to a status: a number is a valid
// time, Kernel Tuner's error strings are failures.
func cacheStatus(v any) (evaluate.Status, float64, error) {
	switch x := v.(type) {
	case json.Number, float64:
		var f float64
		if n, ok := x.(json.Number); ok {
			var err error
			if f, err = strconv.ParseFloat(string(n), 64); err != nil {
				return "", 0, err
			}
		} else {
			f = x.(float64)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return evaluate.StatusRuntime, 0, nil
		}
		return evaluate.StatusOK, f, nil
	case string:
		switch x {
		case "InvalidConfig":
			return evaluate.StatusInvalid, 0, nil
		case "CompilationFailedConfig":
			return evaluate.StatusCompile, 0, nil
		case "RuntimeFailedConfig":
			return evaluate.StatusRuntime, 0, nil
		}
		return "", 0, fmt.Errorf("unknown failure %q", x)
	case nil:
		return "", 0, errors.New("missing")
	}
	return "", 0, fmt.Errorf("unexpected %T", v)
}

type t4File struct {
	Results []struct {
		Configuration json.RawMessage `json:"configuration"`
		Times         struct {
			Compilation float64   `json:"compilation"`
			Framework   float64   `json:"framework"`
			Benchmark   *float64  `json:"benchmark"`
			Runtimes    []float64 `json:"runtimes"`
		} `json:"times"`
		Invalidity   string `json:"invalidity"`
		Measurements []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"measurements"`
		Objectives []string `json:"objectives"`
	} `json:"results"`
}

func parseT4(path string, data []byte) (*Recording, error) {
	var f t4File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.Results) == 0 {
		return nil, errors.New("results: empty")
	}
	names, err := objectKeys(f.Results[0].Configuration)
	if err != nil {
		return nil, fmt.Errorf("results[0].configuration: %w", err)
	}
	if len(names) == 0 {
		return nil, errors.New("results[0].configuration: no parameters")
	}
	type row struct {
		vals  []any
		trial evaluate.Trial
	}
	rows := make([]row, 0, len(f.Results))
	frameworkMS, framework := 0.0, 0
	seen := make([][]any, len(names))
	for i, r := range f.Results {
		var cfg map[string]any
		d := json.NewDecoder(bytes.NewReader(r.Configuration))
		d.UseNumber()
		if err := d.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("results[%d].configuration: %w", i, err)
		}
		if len(cfg) != len(names) {
			return nil, fmt.Errorf("results[%d].configuration: %d parameters, want %d", i, len(cfg), len(names))
		}
		vals := make([]any, len(names))
		for j, n := range names {
			v, ok := cfg[n]
			if !ok {
				return nil, fmt.Errorf("results[%d].configuration: missing %q", i, n)
			}
			vals[j] = v
			seen[j] = append(seen[j], v)
		}
		st, err := t4Status(r.Invalidity)
		if err != nil {
			return nil, fmt.Errorf("results[%d].invalidity: %w", i, err)
		}
		t := evaluate.Trial{Status: st, Times: r.Times.Runtimes}
		bench := 0.0
		if r.Times.Benchmark != nil {
			bench = *r.Times.Benchmark
		} else {
			for _, x := range r.Times.Runtimes {
				bench += x
			}
		}
		t.Cost = (r.Times.Compilation + r.Times.Framework + bench) / 1000
		if r.Times.Framework > 0 {
			frameworkMS += r.Times.Framework
			framework++
		}
		if st == evaluate.StatusOK {
			obj := "time"
			if len(r.Objectives) > 0 {
				obj = r.Objectives[0]
			}
			found := false
			for _, m := range r.Measurements {
				if m.Name != obj {
					continue
				}
				n, ok := m.Value.(json.Number)
				x, err := n.Float64()
				if !ok || err != nil || !(x > 0) || math.IsInf(x, 0) {
					return nil, fmt.Errorf("results[%d].measurements[%q]: %v is not a positive number", i, obj, m.Value)
				}
				t.Time, found = x, true
			}
			if !found {
				return nil, fmt.Errorf("results[%d].measurements: no %q", i, obj)
			}
		}
		rows = append(rows, row{vals: vals, trial: t})
	}
	params := make([]genome.Param, len(names))
	for j, n := range names {
		vals, kind, err := values(seen[j], true)
		if err != nil {
			return nil, fmt.Errorf("configuration[%q]: %w", n, err)
		}
		params[j] = genome.Param{Name: n, Kind: kind, Values: vals}
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r.vals))
		for j, v := range r.vals {
			gv, err := genome.ValueOf(v)
			if err != nil {
				return nil, fmt.Errorf("results[%d].configuration[%q]: %w", i, names[j], err)
			}
			parts[j] = gv.String()
		}
		keys[i] = strings.Join(parts, ",")
	}
	space, err := genome.NewSpace(params, genome.SpaceOptions{Domain: keys})
	if err != nil {
		return nil, err
	}
	rec := &Recording{space: space, trials: make(map[string]evaluate.Trial, len(rows)), device: "unknown", frameworkMS: frameworkMS, framework: framework}
	for i, r := range rows {
		r.trial.Key = keys[i]
		r.trial.Device = rec.device
		if _, dup := rec.trials[keys[i]]; dup {
			return nil, fmt.Errorf("results[%d]: config %q recorded twice", i, keys[i])
		}
		rec.add(r.trial)
	}
	return rec, nil
}

func t4Status(s string) (evaluate.Status, error) {
	switch s {
	case "correct", "":
		return evaluate.StatusOK, nil
	case "compile":
		return evaluate.StatusCompile, nil
	case "runtime":
		return evaluate.StatusRuntime, nil
	case "timeout":
		return evaluate.StatusTimeout, nil
	case "correctness":
		return evaluate.StatusWrongResult, nil
	case "constraints":
		return evaluate.StatusConstraints, nil
	}
	return "", fmt.Errorf("unknown invalidity %q", s)
}

// objectKeys returns the keys of a JSON object in file order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// values converts a parameter's JSON values into genome values, deduplicated.
// Value lists from T4 files come unordered, so numbers are sorted; lists
// from tune_params keep their order.
func values(raw []any, sortNumbers bool) ([]genome.Value, genome.Kind, error) {
	if len(raw) == 0 {
		return nil, 0, errors.New("no values")
	}
	var out []genome.Value
	seen := map[string]bool{}
	kind := genome.Kind(0)
	for _, a := range raw {
		v, err := genome.ValueOf(a)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case kind == 0:
			kind = v.Kind
		case kind == genome.KindInt && v.Kind == genome.KindFloat:
			kind = genome.KindFloat
		case kind == genome.KindFloat && v.Kind == genome.KindInt:
		case kind != v.Kind:
			return nil, 0, fmt.Errorf("mixed value types %s and %s", kind, v.Kind)
		}
		if s := v.String(); !seen[s] {
			seen[s] = true
			out = append(out, v)
		}
	}
	if sortNumbers && kind != genome.KindString {
		slices.SortStableFunc(out, func(a, b genome.Value) int {
			x, _ := a.Float64()
			y, _ := b.Float64()
			return cmp.Compare(x, y)
		})
	}
	return out, kind, nil
}

func problemSize(raw json.RawMessage) []int {
	var dims []json.Number
	if json.Unmarshal(raw, &dims) != nil {
		return nil
	}
	out := make([]int, 0, len(dims))
	for _, d := range dims {
		i, err := strconv.Atoi(string(d))
		if err != nil {
			return nil
		}
		out = append(out, i)
	}
	return out
}

// deviceClass makes a device class from a recorded device name.
func deviceClass(name string) string {
	if name == "" {
		return "unknown"
	}
	if strings.Contains(strings.ToUpper(name), "NVIDIA") {
		return "nvidia/" + name
	}
	return name
}

func (r *Recording) add(t evaluate.Trial) {
	r.trials[t.Key] = t
	if t.OK() && (r.best == "" || t.Time < r.optimum || (t.Time == r.optimum && t.Key < r.best)) {
		r.optimum, r.best = t.Time, t.Key
	}
}

// FrameworkMS is the mean time the recording tuner spent on itself per
// config (Kernel Tuner's framework_time, T4's framework time), in ms; zero
// when none was recorded.
func (r *Recording) FrameworkMS() float64 {
	if r.framework == 0 {
		return 0
	}
	return r.frameworkMS / float64(r.framework)
}

// Optimum is the smallest valid time in the recording and its config key.
// It is zero when no config is valid.
func (r *Recording) Optimum() (float64, string) { return r.optimum, r.best }

// Len is the number of recorded configs.
func (r *Recording) Len() int { return len(r.trials) }

// Replays is true: a recording runs nothing on a device.
func (r *Recording) Replays() bool { return true }

// Keys lists the recorded configs' keys, sorted.
func (r *Recording) Keys() []string { return slices.Sorted(maps.Keys(r.trials)) }

// Trial returns the recorded trial of a config key.
func (r *Recording) Trial(key string) (evaluate.Trial, bool) {
	t, ok := r.trials[key]
	return t, ok
}

// Device implements evaluate.Evaluator.
func (r *Recording) Device() string { return r.device }

// Space implements evaluate.Evaluator. A recording holds one problem: p must
// be empty or equal to the recorded problem size.
func (r *Recording) Space(p evaluate.Problem) (*genome.Space, error) {
	if len(p.Dims) > 0 && len(r.Problem) > 0 && !slices.Equal(p.Dims, r.Problem) {
		return nil, fmt.Errorf("recording %s holds problem %v, not %v: %w", r.Name, r.Problem, p.Dims, evaluate.ErrUnknownProblem)
	}
	return r.space, nil
}

// Evaluate implements evaluate.Evaluator by returning the recorded trial.
func (r *Recording) Evaluate(ctx context.Context, c genome.Config, p evaluate.Problem) (evaluate.Trial, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Trial{}, err
	}
	if _, err := r.Space(p); err != nil {
		return evaluate.Trial{}, err
	}
	if !r.space.InRange(c) {
		return evaluate.Trial{}, fmt.Errorf("recording %s: config %v: %w", r.Name, []int(c), evaluate.ErrNotInSpace)
	}
	key := r.space.Key(c)
	t, ok := r.trials[key]
	if !ok {
		return evaluate.Trial{}, fmt.Errorf("recording %s: config %q: %w", r.Name, key, evaluate.ErrNotInSpace)
	}
	t.Times = slices.Clone(t.Times)
	return t, nil
}

var _ evaluate.Evaluator = (*Recording)(nil)
