package pipeline

import (
	"fmt"
	"time"
)

// Stage is one kernel launch of a pipeline.
type Stage struct {
	Name    string   `json:"name"`            // unique in the pipeline
	Kernel  string   `json:"kernel"`          // a builtin kernel
	Problem string   `json:"problem"`         // its dims joined by commas, as jobs name problems
	Config  string   `json:"config"`          // config key; "" is the kernel's default
	Stream  string   `json:"stream"`          // stages of a stream run in order on one goroutine
	After   []string `json:"after,omitempty"` // stages of other streams it waits for
}

// Pipeline is a named set of stages.
type Pipeline struct {
	Name   string  `json:"name"`
	Stages []Stage `json:"stages"`
}

// BuiltinName is the name of the builtin pipeline.
const BuiltinName = "builtin"

// Builtin is the pipeline quasimd can run itself (see the package doc).
func Builtin() Pipeline {
	return Pipeline{Name: BuiltinName, Stages: []Stage{
		{Name: "conv_big", Kernel: "conv2d", Problem: "512,512,7", Stream: "a"},
		{Name: "conv_small", Kernel: "conv2d", Problem: "256,256,5", Stream: "b"},
		{Name: "sgemm", Kernel: "sgemm", Problem: "128,128,128", Stream: "b"},
		{Name: "reduce", Kernel: "reduce", Problem: "2097152", Stream: "a", After: []string{"conv_small"}},
	}}
}

// Validate checks names, streams and joins: each stage named once, with a
// kernel, a problem and a stream, joining only earlier stages of other
// streams (so no join can deadlock).
func (p Pipeline) Validate() error {
	if p.Name == "" {
		return fmt.Errorf("pipeline: name missing")
	}
	if len(p.Stages) == 0 {
		return fmt.Errorf("pipeline %q: no stages", p.Name)
	}
	seen := map[string]int{}
	for i, s := range p.Stages {
		where := fmt.Sprintf("pipeline %q: stages[%d]", p.Name, i)
		switch {
		case s.Name == "":
			return fmt.Errorf("%s: name missing", where)
		case s.Kernel == "":
			return fmt.Errorf("%s (%s): kernel missing", where, s.Name)
		case s.Problem == "":
			return fmt.Errorf("%s (%s): problem missing", where, s.Name)
		case s.Stream == "":
			return fmt.Errorf("%s (%s): stream missing", where, s.Name)
		}
		if _, dup := seen[s.Name]; dup {
			return fmt.Errorf("%s: name %q used twice", where, s.Name)
		}
		for _, a := range s.After {
			j, ok := seen[a]
			switch {
			case !ok:
				return fmt.Errorf("%s (%s): after %q: no earlier stage of that name", where, s.Name, a)
			case p.Stages[j].Stream == s.Stream:
				return fmt.Errorf("%s (%s): after %q: same stream (program order already holds)", where, s.Name, a)
			}
		}
		seen[s.Name] = i
	}
	return nil
}

// index is the position of the named stage, or -1.
func (p Pipeline) index(name string) int {
	for i, s := range p.Stages {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Perturbation changes one stage of an iteration: it is delayed by Delay
// (a sleep after its kernel), run at Config instead of its own, or sped up
// virtually by the fraction Speedup, as Coz does: each time the stage runs
// for t, every other stream pauses f·t (see Runner.Run).
type Perturbation struct {
	Name    string        `json:"name"`
	Stage   string        `json:"stage"`
	Delay   time.Duration `json:"delay_ns,omitempty"`
	Config  string        `json:"config,omitempty"`
	Speedup float64       `json:"speedup,omitempty"`
}

// String describes p for tables.
func (p Perturbation) String() string {
	if p.Config != "" {
		return fmt.Sprintf("%s at %s", p.Stage, p.Config)
	}
	if p.Speedup != 0 {
		return fmt.Sprintf("%s %g%% faster (virtual)", p.Stage, 100*p.Speedup)
	}
	return fmt.Sprintf("%s +%s", p.Stage, p.Delay)
}

// check reports whether p applies to pipeline pl.
func (p Perturbation) check(pl Pipeline) error {
	switch {
	case pl.index(p.Stage) < 0:
		return fmt.Errorf("perturbation %q: stage %q is not in pipeline %q", p.Name, p.Stage, pl.Name)
	case p.Delay < 0:
		return fmt.Errorf("perturbation %q: negative delay %s", p.Name, p.Delay)
	case p.Speedup != 0 && !(p.Speedup > 0 && p.Speedup < 1):
		return fmt.Errorf("perturbation %q: speedup %v: want a fraction above 0 and below 1", p.Name, p.Speedup)
	case p.kinds() != 1:
		return fmt.Errorf("perturbation %q: want a delay, a config or a speedup, one of them", p.Name)
	}
	return nil
}

// kinds counts the changes p asks for (one is valid).
func (p Perturbation) kinds() int {
	n := 0
	for _, set := range []bool{p.Delay > 0, p.Config != "", p.Speedup != 0} {
		if set {
			n++
		}
	}
	return n
}

// BuiltinPerturbations are the experiment's perturbations of Builtin:
// delays and configs of stages on the critical path (conv_big, reduce) and
// off it (conv_small, sgemm), some of them large enough to move a stage
// off the path onto it. The configs are the fastest and slowest of
// evaluate/builtin's measured spread where they fit the problem.
func BuiltinPerturbations() []Perturbation {
	ms := time.Millisecond
	return []Perturbation{
		{Name: "conv_big+1ms", Stage: "conv_big", Delay: 1 * ms},
		{Name: "conv_big+3ms", Stage: "conv_big", Delay: 3 * ms},
		{Name: "reduce+2ms", Stage: "reduce", Delay: 2 * ms},
		{Name: "conv_small+2ms", Stage: "conv_small", Delay: 2 * ms},
		{Name: "sgemm+2ms", Stage: "sgemm", Delay: 2 * ms},
		{Name: "conv_small+12ms", Stage: "conv_small", Delay: 12 * ms},
		{Name: "sgemm+12ms", Stage: "sgemm", Delay: 12 * ms},
		{Name: "conv_big-fast", Stage: "conv_big", Config: "256,16,1,False,8,fp32"},
		{Name: "conv_big-slow", Stage: "conv_big", Config: "16,32,1,True,1,fp32"},
		{Name: "reduce-fast", Stage: "reduce", Config: "65536,8,1,float32,fp32"},
		{Name: "sgemm-fast", Stage: "sgemm", Config: "16,128,16,8,1,True,ikj,fp32"},
		{Name: "sgemm-slow", Stage: "sgemm", Config: "16,16,128,8,1,False,jik,fp32"},
		{Name: "conv_small-slow", Stage: "conv_small", Config: "16,32,1,True,1,fp32"},
	}
}

// BuiltinSpeedups are virtual speedups of every stage of Builtin by a
// fifth, with delays of the same stages to check them against: on the
// critical path a delay of d costs about d and a virtual speedup of f·t
// gains about f·t; beside it both change about nothing. The daemon's
// experiment does not run them (its wire format has no speedup).
func BuiltinSpeedups() []Perturbation {
	var out []Perturbation
	for _, s := range Builtin().Stages {
		out = append(out,
			Perturbation{Name: s.Name + "+1ms", Stage: s.Name, Delay: time.Millisecond},
			Perturbation{Name: s.Name + "-20%", Stage: s.Name, Speedup: 0.2})
	}
	return out
}
