package replay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/gzread"
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

	objective string // what the recording measured as its objective
	maximize  bool   // whether a higher objective is better
	rule      string // how Time relates to the objective (see finish)

	frameworkMS float64 // sum of the framework time recorded per config
	framework   int     // configs that recorded one
}

// maxFileSize bounds what Load reads, compressed or not, so a bad file
// cannot exhaust memory.
const maxFileSize = 1 << 30

// Load reads a Kernel Tuner cache file (.json or .json.gz) or a FAIR T4
// results file (plain or gzipped).
func Load(path string) (*Recording, error) {
	data, err := gzread.ReadFile(path, maxFileSize)
	if err != nil {
		return nil, err
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
	Objective      string                     `json:"objective"`
	HigherBetter   *bool                      `json:"objective_higher_is_better"`
	Cache          map[string]json.RawMessage `json:"cache"`
}

// cachePhases maps Kernel Tuner's timing columns to the FAIR T4 names of
// "times", the names Trial.PhasesMS uses.
var cachePhases = map[string]string{
	"compile_time":      "compilation",
	"benchmark_time":    "benchmark",
	"framework_time":    "framework",
	"strategy_time":     "search_algorithm",
	"verification_time": "validation",
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
	problem, err := problemSize(f.ProblemSize)
	if err != nil {
		return nil, fmt.Errorf("problem_size: %w", err)
	}
	rec := &Recording{
		Kernel:  f.KernelName,
		Problem: problem,
		device:  deviceClass(f.DeviceName),
		space:   space,
		trials:  make(map[string]evaluate.Trial, len(keys)),
	}
	rec.setObjective(f.Objective, f.HigherBetter)
	for _, k := range keys {
		var e map[string]json.RawMessage
		if err := json.Unmarshal(f.Cache[k], &e); err != nil {
			return nil, fmt.Errorf("cache[%q]: %w", k, err)
		}
		tr, err := rec.cacheTrial(k, e, f.TuneParams)
		if err != nil {
			return nil, fmt.Errorf("cache[%q]: %w", k, err)
		}
		rec.add(tr)
	}
	rec.finish()
	return rec, nil
}

// cacheTrial reads one cache entry: the objective's value (or failure),
// the repetitions, the timing columns and every other number recorded.
func (r *Recording) cacheTrial(key string, e map[string]json.RawMessage, params map[string][]any) (evaluate.Trial, error) {
	objRaw, ok := e[r.objective]
	if !ok {
		return evaluate.Trial{}, fmt.Errorf("%s: missing (the file's objective)", r.objective)
	}
	st, v, err := cacheStatus(decodeAny(objRaw), r.objective == "time")
	if err != nil {
		return evaluate.Trial{}, fmt.Errorf("%s: %w", r.objective, err)
	}
	tr := evaluate.Trial{Key: key, Status: st, Time: v, Device: r.device}
	if raw, ok := e["times"]; ok {
		if err := json.Unmarshal(raw, &tr.Times); err != nil {
			return tr, fmt.Errorf("times: %w", err)
		}
	}
	if raw, ok := e["timestamp"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			tr.At = parseStamp(s)
		}
	}
	for name, raw := range e {
		if _, isParam := params[name]; isParam || name == "times" || name == "timestamp" || name == r.objective {
			continue
		}
		x, ok := number(decodeAny(raw))
		if !ok {
			continue // a failure string in another column, or a list
		}
		if phase, ok := cachePhases[name]; ok {
			if tr.PhasesMS == nil {
				tr.PhasesMS = map[string]float64{}
			}
			tr.PhasesMS[phase] = x
			continue
		}
		if tr.Observables == nil {
			tr.Observables = map[string]float64{}
		}
		tr.Observables[name] = x
	}
	if r.objective != "time" && st == evaluate.StatusOK {
		tr.Observables = withValue(tr.Observables, r.objective, v)
	}
	if err := energy(&tr); err != nil {
		return tr, err
	}
	ph := tr.PhasesMS
	tr.Cost = (ph["compilation"] + ph["benchmark"] + ph["framework"]) / 1000
	if ph["framework"] > 0 {
		r.frameworkMS += ph["framework"]
		r.framework++
	}
	return tr, nil
}

func withValue(m map[string]float64, k string, v float64) map[string]float64 {
	if m == nil {
		m = map[string]float64{}
	}
	m[k] = v
	return m
}

// energy fills a valid trial's energy and power from Kernel Tuner's NVML
// observer columns: nvml_energy is one run's energy in J, nvml_power the
// mean power in W.
func energy(tr *evaluate.Trial) error {
	if tr.Status != evaluate.StatusOK {
		return nil
	}
	e, hasE := tr.Observables["nvml_energy"]
	p, hasP := tr.Observables["nvml_power"]
	for _, c := range []struct {
		name string
		v    float64
		has  bool
	}{{"nvml_energy", e, hasE}, {"nvml_power", p, hasP}} {
		if c.has && !(c.v > 0 && !math.IsInf(c.v, 0)) {
			return fmt.Errorf("%s: %v is not a positive number", c.name, c.v)
		}
	}
	if hasP {
		tr.PowerW = p
	}
	switch {
	case hasE:
		tr.EnergyMJ = e * 1000
	case hasP && tr.Time > 0:
		tr.EnergyMJ = p * tr.Time // W × ms = mJ
	}
	return nil
}

// decodeAny decodes a JSON value with numbers as json.Number; nil when it
// does not decode.
func decodeAny(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// number is v as a finite float64, if it is a JSON number.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// parseStamp reads a recorded timestamp: Python's str(datetime), which
// Kernel Tuner writes ("2023-01-24 01:03:17.677311+00:00"), or RFC 3339.
// A timestamp in neither form is left out (zero).
func parseStamp(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// cacheStatus maps a cache entry's objective value to a status: a number
// is a valid value (a time must be positive), Kernel Tuner's error strings
// are failures.
func cacheStatus(v any, positive bool) (evaluate.Status, float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return "", 0, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || (positive && f <= 0) {
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
		Timestamp     string                     `json:"timestamp"`
		Configuration json.RawMessage            `json:"configuration"`
		Times         map[string]json.RawMessage `json:"times"`
		Invalidity    string                     `json:"invalidity"`
		Measurements  []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"measurements"`
		Objectives []string `json:"objectives"`
	} `json:"results"`
}

// t4Phases are the phase times of a T4 "times" object; compilation_time is
// the schema's own spelling of what Kernel Tuner writes as compilation.
var t4Phases = map[string]string{
	"compilation": "compilation", "compilation_time": "compilation", "benchmark": "benchmark",
	"framework": "framework", "search_algorithm": "search_algorithm", "validation": "validation",
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
	rec := &Recording{device: "unknown"}
	obj := "time"
	if o := f.Results[0].Objectives; len(o) > 0 {
		obj = o[0]
	}
	rec.setObjective(obj, nil)
	type row struct {
		vals  []any
		trial evaluate.Trial
	}
	rows := make([]row, 0, len(f.Results))
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
		if o := r.Objectives; len(o) > 0 && o[0] != obj {
			return nil, fmt.Errorf("results[%d].objectives: %q, but results[0] has %q", i, o[0], obj)
		}
		st, err := t4Status(r.Invalidity)
		if err != nil {
			return nil, fmt.Errorf("results[%d].invalidity: %w", i, err)
		}
		t := evaluate.Trial{Status: st, At: parseStamp(r.Timestamp)}
		for name, raw := range r.Times {
			if name == "runtimes" {
				if err := json.Unmarshal(raw, &t.Times); err != nil {
					return nil, fmt.Errorf("results[%d].times.runtimes: %w", i, err)
				}
				continue
			}
			phase, ok := t4Phases[name]
			if !ok {
				continue
			}
			x, ok := number(decodeAny(raw))
			if !ok {
				return nil, fmt.Errorf("results[%d].times.%s: %s is not a number", i, name, raw)
			}
			t.PhasesMS = withValue(t.PhasesMS, phase, x)
		}
		bench, ok := t.PhasesMS["benchmark"]
		if !ok {
			for _, x := range t.Times {
				bench += x
			}
		}
		t.Cost = (t.PhasesMS["compilation"] + t.PhasesMS["framework"] + bench) / 1000
		if fw := t.PhasesMS["framework"]; fw > 0 {
			rec.frameworkMS += fw
			rec.framework++
		}
		found := false
		for _, m := range r.Measurements {
			x, isNum := number(m.Value)
			if m.Name != obj {
				if isNum {
					t.Observables = withValue(t.Observables, m.Name, x)
				}
				continue
			}
			if st != evaluate.StatusOK {
				continue
			}
			if !isNum || (obj == "time" && !(x > 0)) {
				return nil, fmt.Errorf("results[%d].measurements[%q]: %v is not a %s", i, obj, m.Value, map[bool]string{true: "positive number", false: "number"}[obj == "time"])
			}
			t.Time, found = x, true
			if obj != "time" {
				t.Observables = withValue(t.Observables, obj, x)
			}
		}
		if st == evaluate.StatusOK && !found {
			return nil, fmt.Errorf("results[%d].measurements: no %q (the objective)", i, obj)
		}
		if err := energy(&t); err != nil {
			return nil, fmt.Errorf("results[%d].measurements: %w", i, err)
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
	rec.space, rec.trials = space, make(map[string]evaluate.Trial, len(rows))
	for i, r := range rows {
		r.trial.Key = keys[i]
		r.trial.Device = rec.device
		if _, dup := rec.trials[keys[i]]; dup {
			return nil, fmt.Errorf("results[%d]: config %q recorded twice", i, keys[i])
		}
		rec.add(r.trial)
	}
	rec.finish()
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

// problemSize reads a cache's problem_size: a list of dims or one number
// (Kernel Tuner accepts both; a string names no size and gives none).
func problemSize(raw json.RawMessage) ([]int, error) {
	switch v := decodeAny(raw).(type) {
	case nil, string:
		return nil, nil
	case json.Number:
		n, err := strconv.Atoi(string(v))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s is not a positive integer", v)
		}
		return []int{n}, nil
	case []any:
		out := make([]int, len(v))
		for i, d := range v {
			n, ok := d.(json.Number)
			x, err := strconv.Atoi(string(n))
			if !ok || err != nil || x <= 0 {
				return nil, fmt.Errorf("[%d]: %v is not a positive integer", i, d)
			}
			out[i] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a number or a list of numbers", raw)
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

func (r *Recording) add(t evaluate.Trial) { r.trials[t.Key] = t }

// The fraction rules: how finish makes Time from the objective value v of a
// valid trial, so that Optimum()/Time is the share of the optimum reached.
const (
	// RuleRatio is a positive objective to minimise (time): Time is v and
	// the fraction optimum/v, the metric of ARCHITECTURE.md.
	RuleRatio = "optimum/best"
	// RuleInverse is a positive objective to maximise (GFLOP/s): Time is
	// 1/v and the fraction v/optimum.
	RuleInverse = "best/optimum"
	// RuleRange is an objective with values ≤ 0 (a score): Time is
	// 1/(1 − 0.99·g) where g = |v − optimum| / |worst − optimum| over the
	// valid values, so the fraction falls linearly from 1 at the optimum
	// to 0.01 at the worst valid value.
	RuleRange = "1-0.99*(best-optimum)/(worst-optimum)"
)

// finish turns each valid trial's objective value into the positive Time
// every strategy minimises (see the rules) and finds the optimum.
func (r *Recording) finish() {
	lo, hi, positive := math.Inf(1), math.Inf(-1), true
	for _, t := range r.trials {
		if !t.OK() {
			continue
		}
		d := r.sign() * t.Time
		lo, hi = min(lo, d), max(hi, d)
		positive = positive && t.Time > 0
	}
	switch {
	case positive && !r.maximize:
		r.rule = RuleRatio
	case positive:
		r.rule = RuleInverse
	default:
		r.rule = RuleRange
	}
	for k, t := range r.trials {
		if !t.OK() {
			continue
		}
		switch r.rule {
		case RuleInverse:
			t.Time = 1 / t.Time
		case RuleRange:
			g := 0.0
			if hi > lo {
				g = (r.sign()*t.Time - lo) / (hi - lo)
			}
			t.Time = 1 / (1 - 0.99*g)
		}
		r.trials[k] = t
		if r.best == "" || t.Time < r.optimum || (t.Time == r.optimum && k < r.best) {
			r.optimum, r.best = t.Time, k
		}
	}
}

func (r *Recording) sign() float64 {
	if r.maximize {
		return -1
	}
	return 1
}

// setObjective records the file's objective ("time" when it names none)
// and its direction: as the file says, else higher is better for a rate
// (a name ending in "/s", as GFLOP/s and GB/s).
func (r *Recording) setObjective(name string, higherBetter *bool) {
	if name == "" {
		name = "time"
	}
	r.objective = name
	switch {
	case higherBetter != nil:
		r.maximize = *higherBetter
	default:
		r.maximize = strings.HasSuffix(name, "/s")
	}
}

// Objective is what the recording measured as its objective, whether a
// higher value is better, and the fraction rule that relates a trial's
// Time to it (RuleRatio for time: Time is the time in ms).
func (r *Recording) Objective() (name string, maximize bool, rule string) {
	return r.objective, r.maximize, r.rule
}

// Value is a trial's recorded objective value: its time for the objective
// time, else the observable of the objective's name.
func (r *Recording) Value(t evaluate.Trial) (float64, bool) {
	if !t.OK() {
		return 0, false
	}
	if r.rule == RuleRatio && r.objective == "time" {
		return t.Time, true
	}
	v, ok := t.Observables[r.objective]
	return v, ok
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
