package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/quasim/quasim/causal"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/internal/pipeline"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/tuner"
)

// Budget by influence. When the jobs of a declared pipeline's kernels wait
// for their first cycle together (the daemon starts, or a reload adds
// them), and the pipeline has budget_by_influence (the default), the spec
// budgets (evaluations) of those at a problem the pipeline's spans show
// are pooled and split by expected end-to-end gain, influence × headroom
// (pipeline.Split), and the cycles start in that order. A job with nothing
// tuned yet gets at least a small first cycle (firstCycle); a tuned job
// whose share rounds to 0 is not tuned now, and its cron schedule tunes it
// later with its own budget. Cron and API triggers are
// one job at a time and keep the spec's or the request's budget.

// jobShare is a job's part of a pooled budget.
type jobShare struct {
	job   *job
	evals int
	why   string
}

// influenceIterations bounds the iterations the split reads: the newest.
const influenceIterations = 200

// pool adds j to its pipeline's pooled first cycles when one of the
// declared pipelines with budget_by_influence names its kernel and its
// spec's budget is in evaluations; false leaves j to start alone.
// Called with s.mu held.
func (s *scheduler) pool(j *job, pooled map[*spec.Pipeline][]*job) bool {
	if s.splitBudget == nil || j.kern.spec.Budget.Evals <= 0 {
		return false
	}
	names := make([]string, 0, len(s.pipes))
	for name := range s.pipes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := s.pipes[name]
		if p.BudgetByInfluence && slices.Contains(p.Kernels, j.key.Kernel) {
			pooled[p] = append(pooled[p], j)
			return true
		}
	}
	return false
}

// startPooled splits each pipeline's pooled budget (which may record the
// builtin pipeline first, so not under s.mu) and starts the cycles, the
// largest expected gain first. Called with s.mu held.
func (s *scheduler) startPooled(pooled map[*spec.Pipeline][]*job) {
	ctx := s.ctx
	for p, jobs := range pooled {
		slices.SortFunc(jobs, func(a, b *job) int { return strings.Compare(a.key.String(), b.key.String()) })
		s.wg.Go(func() {
			shares := s.splitBudget(ctx, p, jobs)
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, sh := range shares {
				if s.jobs[sh.job.key.String()] != sh.job {
					continue // reloaded away meanwhile
				}
				if sh.evals <= 0 {
					s.log.Info().Str("job_id", sh.job.key.String()).Str("pipeline", p.Name).Str("budget", sh.why).Msg("no budget by influence this time; its schedule tunes it later")
					s.closeLeftRunning(sh.job)
					sh.job.held = "budget by influence gave it no evaluations this time (" + sh.why + "); its schedule tunes it later"
					continue
				}
				s.startLocked(sh.job, runRequest{trigger: "start", budget: tuner.Budget{Evals: sh.evals, Why: sh.why}})
			}
		})
	}
}

// splitBudget pools the spec budgets of those jobs whose kernel and
// problem the pipeline's stored spans show and splits them by expected
// end-to-end gain: influence from the spans (for the builtin pipeline with
// none yet, quasimd records it first at the served configs), headroom
// from the job's trials (its default's time against the best,
// pipeline.PriorHeadroom when either is unknown). Jobs the spans do not
// show, and every job when there are no spans, keep their own budget.
// The decision is logged and kept in each cycle record.
func (s *server) splitBudget(ctx context.Context, p *spec.Pipeline, jobs []*job) []jobShare {
	infl, err := s.influences(ctx, p)
	if err != nil || len(infl) == 0 {
		reason := "no spans of the pipeline yet"
		if err != nil {
			reason = err.Error()
		}
		s.log.Info().Str("pipeline", p.Name).Str("reason", reason).Msg("budget by influence: each job keeps its own budget")
	}
	var out []jobShare
	var cands []pipeline.Candidate
	byID := map[string]*job{}
	total := 0
	for _, j := range jobs {
		g, ok := infl[j.key.Kernel+"|"+j.key.Problem]
		if !ok {
			out = append(out, jobShare{job: j, evals: j.kern.spec.Budget.Evals})
			continue
		}
		id := j.key.String()
		byID[id] = j
		total += j.kern.spec.Budget.Evals
		h, least := pipeline.PriorHeadroom, firstCycle(j.kern.spec.Budget.Evals)
		if tp, note := s.tunedProblem(j.kern, j.key.Problem); note == "" {
			h, least = pipeline.Headroom(tp.DefaultMS, tp.BestMS), 0
		}
		cands = append(cands, pipeline.Candidate{Job: id, Influence: g, Headroom: h, Min: least})
	}
	var pooled []jobShare
	for k, sh := range pipeline.Split(cands, total) {
		why := fmt.Sprintf("pipeline %s by influence: rank %d of %d, expected gain %.3f = influence %.3f x headroom %.2f, %d of %d evaluations",
			p.Name, k+1, len(cands), sh.Gain, sh.Influence, sh.Headroom, sh.Evals, total)
		if sh.Raised {
			why += " (a first cycle's least: nothing tuned yet)"
		}
		s.log.Info().Str("job_id", sh.Job).Str("pipeline", p.Name).Int("rank", k+1).Float64("gain", sh.Gain).Float64("influence", sh.Influence).
			Float64("headroom", sh.Headroom).Int("evals", sh.Evals).Int("total", total).Msg("budget by influence")
		pooled = append(pooled, jobShare{job: byID[sh.Job], evals: sh.Evals, why: why})
	}
	return append(pooled, out...)
}

// firstCycle is the least a job with nothing tuned gets from a pooled
// split: a tenth of its spec budget, at least one evaluation, so that it
// serves a config from its first cycle rather than waiting for its
// schedule (hours) with nothing.
func firstCycle(budget int) int { return max(1, (budget+9)/10) }

// influences is each kernel|problem's influence in p's newest stored
// iterations (problems as jobs write them). The builtin pipeline with no
// spans yet is recorded first: ten iterations at the served configs.
func (s *server) influences(ctx context.Context, p *spec.Pipeline) (map[string]float64, error) {
	iters, _, _, err := s.storedIterations(p.Name)
	if err != nil {
		return nil, err
	}
	if len(iters) == 0 && p.Name == pipeline.BuiltinName {
		if iters, err = s.recordBuiltin(ctx); err != nil {
			return nil, fmt.Errorf("record the builtin pipeline: %w", err)
		}
	}
	if len(iters) > influenceIterations {
		iters = iters[len(iters)-influenceIterations:]
	}
	raw, err := pipeline.Influences(iters)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(raw))
	for k, v := range raw {
		kernel, problem, _ := strings.Cut(k, "|") // kernel names hold no |
		if dims, err := parseProblem(problem); err == nil {
			problem = evaluate.Problem{Dims: dims}.String()
		}
		out[kernel+"|"+problem] = v
	}
	return out, nil
}

// recordBuiltin runs ten baseline iterations of the builtin pipeline at
// the served configs under the CPU's device lock, stores their spans and
// returns them as iterations.
func (s *server) recordBuiltin(ctx context.Context) ([][]causal.Span, error) {
	rn, err := pipeline.New(pipeline.Config{Pipeline: pipeline.Builtin(), Clock: pipeline.Since(time.Now()), Seed: s.sched.seed})
	if err != nil {
		return nil, err
	}
	s.useServed(rn)
	unlock, err := s.lockDevice(ctx, builtin.CPUClass())
	if err != nil {
		return nil, err
	}
	rep, err := pipeline.Experiment(ctx, rn, nil, pipeline.ExperimentOptions{Runs: 10, RNG: rand.New(rand.NewPCG(s.sched.seed, 13))}, s.sched.clock())
	unlock()
	if err != nil {
		return nil, err
	}
	s.keepSpans(pipeline.BuiltinName, rep.Spans)
	return causal.Iterations(rep.Spans), nil
}
