package daemon

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/spec"
)

// loadPipelines indexes the declared pipelines and reports the pipeline
// files that failed. A pipeline naming a kernel that is not loaded still
// loads (its spans are not lost while a kernel spec is being fixed), with
// a note in the spec errors naming the file and field.
func (s *scheduler) loadPipelines(dir spec.Dir, kernels map[string]*kernel) (map[string]*spec.Pipeline, []string) {
	out := make(map[string]*spec.Pipeline, len(dir.Pipelines))
	var notes []string
	for _, err := range dir.PipelineErrs {
		s.log.Error().Err(err).Str("dir", s.dir).Msg("pipeline not loaded")
		notes = append(notes, err.Error())
	}
	for _, p := range dir.Pipelines {
		for i, k := range p.Kernels {
			if kernels[k] == nil {
				msg := fmt.Sprintf("%s: kernels[%d]: %q is not a loaded kernel spec (the pipeline is loaded; its %s spans have no job to tune)", p.Source, i, k, k)
				s.log.Warn().Str("pipeline", p.Name).Str("kernel", k).Msg("pipeline names a kernel that is not loaded")
				notes = append(notes, msg)
			}
		}
		out[p.Name] = p
	}
	return out, notes
}

// pipeline returns the declared pipeline name.
func (s *scheduler) pipeline(name string) (*spec.Pipeline, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pipes[name]
	return p, ok
}

// pipelines returns the declared pipelines sorted by name.
func (s *scheduler) pipelines() []*spec.Pipeline {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*spec.Pipeline, 0, len(s.pipes))
	for _, p := range s.pipes {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *spec.Pipeline) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func pipelineInfo(p *spec.Pipeline) api.Pipeline {
	return api.Pipeline{
		Name: p.Name, Source: p.Source, Kernels: append([]string{}, p.Kernels...), BudgetByInfluence: p.BudgetByInfluence,
		RetainSpans: p.Retention.Spans, RetainBatches: p.Retention.Batches,
	}
}
