package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// PipelineDecl is a pipeline a harness declares in its hello: stages it
// runs itself, on threads or streams of its own, for quasimd's perturbation
// experiments (docs/kernel-authors/harness-protocol.md, section 5).
type PipelineDecl struct {
	Name   string      `json:"name"`
	Stages []StageDecl `json:"stages"`
}

// StageDecl is one stage of a declared pipeline.
type StageDecl struct {
	Name string `json:"name"`
	// Kernel names what the stage runs (default: the harness's name). A
	// stage of the harness's own kernel is tuned by the harness's params;
	// any other kernel has Params of its own (none: not tunable).
	Kernel      string   `json:"kernel,omitempty"`
	Problem     []int    `json:"problem"`
	Stream      string   `json:"stream"`
	After       []string `json:"after,omitempty"`
	Params      []Param  `json:"params,omitempty"`
	Constraints []string `json:"constraints,omitempty"`
}

// MaxStages bounds a declared pipeline.
const MaxStages = 256

// checkPipeline validates a hello's pipeline, naming the field at fault:
// stages named once, each with a problem and a stream, own params only for
// another kernel, joins only of earlier stages of other streams (so a
// harness running them in order cannot deadlock).
func checkPipeline(m Hello) error {
	d := m.Pipeline
	if d == nil {
		return nil
	}
	switch {
	case !genome.IsName(d.Name):
		return fmt.Errorf("pipeline.name %q is not a name", d.Name)
	case len(d.Stages) == 0:
		return errors.New("pipeline.stages: none")
	case len(d.Stages) > MaxStages:
		return fmt.Errorf("pipeline.stages: %d, at most %d", len(d.Stages), MaxStages)
	}
	seen := map[string]int{}
	for i, s := range d.Stages {
		at := fmt.Sprintf("pipeline.stages[%d]", i)
		if !genome.IsName(s.Name) {
			return fmt.Errorf("%s.name %q is not a name", at, s.Name)
		}
		if _, dup := seen[s.Name]; dup {
			return fmt.Errorf("%s.name %q used twice", at, s.Name)
		}
		if len(s.Problem) == 0 {
			return fmt.Errorf("%s (%s).problem: none", at, s.Name)
		}
		for j, x := range s.Problem {
			if x <= 0 {
				return fmt.Errorf("%s (%s).problem[%d]: %d, want > 0", at, s.Name, j, x)
			}
		}
		if s.Stream == "" {
			return fmt.Errorf("%s (%s).stream: none", at, s.Name)
		}
		if (s.Kernel == "" || s.Kernel == m.Name) && (len(s.Params) > 0 || len(s.Constraints) > 0) {
			return fmt.Errorf("%s (%s).params: a stage of the harness's own kernel %q is tuned by its params", at, s.Name, m.Name)
		}
		if _, err := params(Hello{Params: s.Params}); err != nil {
			return fmt.Errorf("%s (%s).%w", at, s.Name, err)
		}
		for j, a := range s.After {
			k, ok := seen[a]
			switch {
			case !ok:
				return fmt.Errorf("%s (%s).after[%d] %q: no earlier stage of that name", at, s.Name, j, a)
			case d.Stages[k].Stream == s.Stream:
				return fmt.Errorf("%s (%s).after[%d] %q: same stream (program order already holds)", at, s.Name, j, a)
			}
		}
		seen[s.Name] = i
	}
	return nil
}

// StageKernel is the kernel stage i of the declared pipeline runs.
func (h *Harness) StageKernel(i int) string {
	if k := h.hello.Pipeline.Stages[i].Kernel; k != "" {
		return k
	}
	return h.hello.Name
}

// StageSpace is the space of stage i of the declared pipeline: the
// harness's for its own kernel, else the stage's own params (an empty
// space when it has none: one config, the empty one).
func (h *Harness) StageSpace(i int) (*genome.Space, error) {
	s := h.hello.Pipeline.Stages[i]
	if s.Kernel == "" || s.Kernel == h.hello.Name {
		return h.Space(evaluate.Problem{Dims: s.Problem})
	}
	base, err := params(Hello{Params: s.Params})
	if err != nil {
		return nil, err
	}
	sp, err := genome.NewSpace(base, genome.SpaceOptions{Constraints: s.Constraints})
	if err != nil {
		return nil, fmt.Errorf("exec harness %s: pipeline.stages[%d] (%s): %w", h.hello.Name, i, s.Name, err)
	}
	return sp, nil
}

// pipelineRequest asks the harness for one iteration of its pipeline.
type pipelineRequest struct {
	Type      string                    `json:"type"`
	ID        int                       `json:"id"`
	Iteration int                       `json:"iteration"`
	Configs   map[string]map[string]any `json:"configs"`
	DelaysNS  map[string]int64          `json:"delays_ns,omitempty"`
}

// StageSpan is one stage of an iteration, on the harness's monotonic
// clock; DelayedNS is how long its delay really waited (0 without one).
type StageSpan struct {
	Stage     string   `json:"stage"`
	StartNS   int64    `json:"start_ns"`
	EndNS     int64    `json:"end_ns"`
	DelayedNS int64    `json:"delayed_ns,omitempty"`
	Stream    string   `json:"stream,omitempty"`
	After     []string `json:"after,omitempty"`
}

// PipelineResult is the harness's answer to a pipeline request: spans of
// every stage, or the end-to-end time and each stage's time.
type PipelineResult struct {
	Type        string           `json:"type"`
	ID          int              `json:"id"`
	Spans       []StageSpan      `json:"spans,omitempty"`
	EndToEndNS  int64            `json:"end_to_end_ns,omitempty"`
	StageNS     map[string]int64 `json:"stage_ns,omitempty"`
	DelayedNS   map[string]int64 `json:"delayed_ns,omitempty"`
	ErrorString string           `json:"error,omitempty"`
}

// maxNS bounds a time in an answer (about 146 years), so differences of
// two never overflow.
const maxNS = math.MaxInt64 / 2

// parsePipelineResult reads the answer line b to pipeline request id
// with delays, strictly against the declaration d: every stage once, in
// one of the two forms, times in order, streams and joins kept. Spans come
// back in declaration order.
func parsePipelineResult(b []byte, id int, d *PipelineDecl, delays map[string]int64) (PipelineResult, error) {
	var res PipelineResult
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return res, fmt.Errorf("answer %q: %w", clip(b), err)
	}
	switch {
	case res.Type != "pipeline_result":
		return res, fmt.Errorf("answer type %q, want pipeline_result", res.Type)
	case res.ID != id:
		return res, fmt.Errorf("answer id %d, want %d", res.ID, id)
	case res.ErrorString != "":
		return res, fmt.Errorf("harness failed the iteration: %s", res.ErrorString)
	}
	idx := map[string]int{}
	for i, s := range d.Stages {
		idx[s.Name] = i
	}
	if len(res.Spans) > 0 {
		if res.EndToEndNS != 0 || res.StageNS != nil || res.DelayedNS != nil {
			return res, errors.New("spans: given with end_to_end_ns, stage_ns or delayed_ns; want one form")
		}
		return res, checkSpans(&res, d, idx, delays)
	}
	if res.StageNS == nil {
		return res, errors.New("neither spans nor stage_ns")
	}
	if !(res.EndToEndNS > 0 && res.EndToEndNS < maxNS) {
		return res, fmt.Errorf("end_to_end_ns %d: want > 0", res.EndToEndNS)
	}
	for name, t := range res.StageNS {
		if _, ok := idx[name]; !ok {
			return res, fmt.Errorf("stage_ns[%q]: no such stage", name)
		}
		if !(t >= 0 && t <= res.EndToEndNS) {
			return res, fmt.Errorf("stage_ns[%q] %d: want 0 to end_to_end_ns", name, t)
		}
	}
	for _, s := range d.Stages {
		if _, ok := res.StageNS[s.Name]; !ok {
			return res, fmt.Errorf("stage_ns[%q]: missing", s.Name)
		}
	}
	for name, t := range res.DelayedNS {
		if err := checkDelayed(fmt.Sprintf("delayed_ns[%q]", name), name, t, res.StageNS[name], delays, idx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checkSpans checks the spans form and puts the spans in declaration order.
func checkSpans(res *PipelineResult, d *PipelineDecl, idx map[string]int, delays map[string]int64) error {
	if len(res.Spans) != len(d.Stages) {
		return fmt.Errorf("spans: %d, want one per stage (%d)", len(res.Spans), len(d.Stages))
	}
	out := make([]StageSpan, len(d.Stages))
	got := make([]bool, len(d.Stages))
	for k, s := range res.Spans {
		at := fmt.Sprintf("spans[%d]", k)
		i, ok := idx[s.Stage]
		switch {
		case !ok:
			return fmt.Errorf("%s.stage %q: no such stage", at, s.Stage)
		case got[i]:
			return fmt.Errorf("%s.stage %q: given twice", at, s.Stage)
		case !(s.StartNS >= 0 && s.StartNS <= s.EndNS && s.EndNS < maxNS):
			return fmt.Errorf("%s (%s): start_ns %d, end_ns %d: want 0 <= start <= end", at, s.Stage, s.StartNS, s.EndNS)
		case s.Stream != "" && s.Stream != d.Stages[i].Stream:
			return fmt.Errorf("%s (%s).stream %q: declared %q", at, s.Stage, s.Stream, d.Stages[i].Stream)
		case s.After != nil && !slices.Equal(s.After, d.Stages[i].After):
			return fmt.Errorf("%s (%s).after %q: declared %q", at, s.Stage, s.After, d.Stages[i].After)
		}
		if err := checkDelayed(at+".delayed_ns", s.Stage, s.DelayedNS, s.EndNS-s.StartNS, delays, idx); err != nil {
			return err
		}
		got[i] = true
		out[i] = s
	}
	// Order: a stage starts after its stream's previous stage and the
	// stages it joins have ended.
	last := map[string]int{}
	for i, st := range d.Stages {
		s := out[i]
		if j, ok := last[st.Stream]; ok && s.StartNS < out[j].EndNS {
			return fmt.Errorf("stage %q starts at %d ns, before %q of its stream %q ends (%d)", st.Name, s.StartNS, out[j].Stage, st.Stream, out[j].EndNS)
		}
		for _, a := range st.After {
			if e := out[idx[a]].EndNS; s.StartNS < e {
				return fmt.Errorf("stage %q starts at %d ns, before %q it waits for ends (%d)", st.Name, s.StartNS, a, e)
			}
		}
		last[st.Stream] = i
	}
	res.Spans = out
	return nil
}

// checkDelayed checks how long a stage says its delay waited: nothing for a
// stage not delayed; at least the delay asked for and at most the stage's
// time for one that is (0: not reported).
func checkDelayed(field, stage string, t, dur int64, delays map[string]int64, idx map[string]int) error {
	if _, ok := idx[stage]; !ok {
		return fmt.Errorf("%s: no such stage", field)
	}
	want, delayed := delays[stage]
	switch {
	case t == 0:
		return nil
	case !delayed:
		return fmt.Errorf("%s %d: stage %q was not delayed", field, t, stage)
	case t < want || t > dur:
		return fmt.Errorf("%s %d: want the delay asked for (%d) to the stage's time (%d)", field, t, want, dur)
	}
	return nil
}

// Pipeline is the pipeline the harness declared, or nil.
func (h *Harness) Pipeline() *PipelineDecl { return h.hello.Pipeline }

// RunPipeline runs iteration it of the declared pipeline with each
// stage's config (a stage missing runs the harness's choice of default)
// and delays in ns, and returns the harness's checked answer. Any fault of
// the harness (a timeout, an exit, a bad answer) is an error naming it; the
// harness is restarted for the next request.
func (h *Harness) RunPipeline(ctx context.Context, it int, configs map[string]map[string]any, delays map[string]int64) (PipelineResult, error) {
	d := h.hello.Pipeline
	if d == nil {
		return PipelineResult{}, fmt.Errorf("exec harness %s: declares no pipeline", h.hello.Name)
	}
	var res PipelineResult
	_, note, err := h.exchange(ctx, func(id int) any {
		return pipelineRequest{Type: "pipeline", ID: id, Iteration: it, Configs: configs, DelaysNS: delays}
	}, func(b []byte, id int) bool {
		var perr error
		res, perr = parsePipelineResult(b, id, d, delays)
		if perr != nil {
			res.ErrorString = perr.Error()
			return res.Type == "pipeline_result" && res.ID == id
		}
		return true
	})
	switch {
	case err != nil:
		return PipelineResult{}, err
	case note != "":
		return PipelineResult{}, fmt.Errorf("exec harness %s: pipeline %s: %s", h.hello.Name, d.Name, note)
	case res.ErrorString != "":
		return PipelineResult{}, fmt.Errorf("exec harness %s: pipeline %s: %s", h.hello.Name, d.Name, res.ErrorString)
	}
	return res, nil
}
