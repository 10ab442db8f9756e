package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// zoner tunes the precision maps of the pipelines that declare a zoning
// section: once per pipeline file as loaded (a reload that changes the
// file tunes again), whenever a chain kernel's served config changes, and
// on POST /v1/pipelines/{pipeline}/zoning; a map stays served while its
// pipeline is tuned again. Results are kept in memory; a restart tunes
// again. Lock order: scheduler.mu may be held while z.mu is taken
// (changed calls jobsChanged), never the other way round.
type zoner struct {
	sched *scheduler
	key   ed25519.PrivateKey
	lock  func(ctx context.Context, device string) (func(), error)
	log   zerolog.Logger
	now   func() time.Time

	mu   sync.Mutex
	runs map[string]*zoneRun // by pipeline name
}

// zoneRun is one pipeline's zoning: the file it was tuned for, and where
// its tuning stands.
type zoneRun struct {
	raw    []byte
	res    api.Zoning
	jobs   []store.JobKey // the chain kernels' jobs, whose lookups carry the map
	used   []string       // their configs the map was tuned at
	cancel context.CancelFunc
}

// update starts tuning each zoned pipeline whose file is new or changed,
// and forgets the pipelines no longer zoned.
func (z *zoner) update(ctx context.Context, pipes []*spec.Pipeline) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.runs == nil {
		z.runs = map[string]*zoneRun{}
	}
	keep := map[string]bool{}
	for _, p := range pipes {
		if p.Zoning == nil {
			continue
		}
		keep[p.Name] = true
		if r := z.runs[p.Name]; r != nil && bytes.Equal(r.raw, p.Raw) {
			continue
		}
		z.startLocked(ctx, p)
	}
	for name, r := range z.runs {
		if !keep[name] {
			r.cancel()
			delete(z.runs, name)
			z.sched.index.invalidate(r.jobs...)
			z.sched.epoch.Add(1)
		}
	}
}

// startLocked starts tuning p, cancelling a tuning of it in flight.
func (z *zoner) startLocked(ctx context.Context, p *spec.Pipeline) {
	if r := z.runs[p.Name]; r != nil {
		r.cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	b := p.Zoning.ErrorBudget.Settings()
	r := &zoneRun{raw: p.Raw, cancel: cancel, res: api.Zoning{
		Pipeline: p.Name, State: api.ZoningTuning, Chain: append([]string{}, p.Zoning.Chain...),
		Budget: api.Budget{Kind: b.Kind, Value: b.Value}, Inputs: cmpOr(p.Zoning.Inputs, evaluate.InputsSigned),
	}}
	if old := z.runs[p.Name]; old != nil && bytes.Equal(old.raw, p.Raw) && old.res.Map != nil {
		// Tuning again for new served configs: the map tuned before stays
		// served until the new one is done.
		prev := old.res
		prev.State = api.ZoningTuning
		r.res, r.jobs, r.used = prev, old.jobs, old.used
	}
	z.runs[p.Name] = r
	go func() {
		fresh := r.res
		fresh.Map, fresh.Default, fresh.Split, fresh.Certificate, fresh.Notes, fresh.Error = nil, nil, nil, "", nil, ""
		fresh.Maps, fresh.Passed = 0, 0
		res, jobs, used := z.tune(ctx, p, fresh)
		z.mu.Lock()
		if z.runs[p.Name] == r && ctx.Err() == nil {
			r.res, r.jobs, r.used = res, jobs, used
		}
		z.mu.Unlock()
		z.sched.index.invalidate(jobs...)
		z.sched.epoch.Add(1)
	}()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// rezone tunes the named pipeline again now.
func (z *zoner) rezone(ctx context.Context, name string) (api.Zoning, error) {
	p, ok := z.sched.pipeline(name)
	if !ok {
		return api.Zoning{}, notFoundf("pipeline %q is not declared", name)
	}
	if p.Zoning == nil {
		return api.Zoning{}, notFoundf("pipeline %q has no zoning section (%s)", name, p.Source)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.runs == nil {
		z.runs = map[string]*zoneRun{}
	}
	z.startLocked(ctx, p)
	return z.runs[name].res, nil
}

// get returns the named pipeline's zoning.
func (z *zoner) get(name string) (api.Zoning, error) {
	p, ok := z.sched.pipeline(name)
	if !ok {
		return api.Zoning{}, notFoundf("pipeline %q is not declared", name)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	r := z.runs[name]
	if p.Zoning == nil || r == nil {
		return api.Zoning{}, notFoundf("pipeline %q has no zoning section (%s)", name, p.Source)
	}
	return r.res, nil
}

// stages returns kernel's stages in the zoned pipelines whose map is
// certified, sorted by pipeline.
func (z *zoner) stages(kernel string) []api.ZoneStage {
	z.mu.Lock()
	defer z.mu.Unlock()
	var out []api.ZoneStage
	for _, r := range z.runs {
		if r.res.Map == nil {
			continue
		}
		for _, st := range r.res.Map.Stages {
			if st.Kernel == kernel {
				st.Pipeline = r.res.Pipeline
				out = append(out, st)
			}
		}
	}
	slices.SortFunc(out, func(a, b api.ZoneStage) int { return strings.Compare(a.Pipeline, b.Pipeline) })
	return out
}

// tune resolves p's chain to the kernels' first jobs and zones it.
func (z *zoner) tune(ctx context.Context, p *spec.Pipeline, res api.Zoning) (api.Zoning, []store.JobKey, []string) {
	var used []string // the configs tuned at
	fail := func(jobs []store.JobKey, format string, args ...any) (api.Zoning, []store.JobKey, []string) {
		res.State, res.Error = api.ZoningFailed, fmt.Sprintf(format, args...)
		z.log.Warn().Str("pipeline", p.Name).Str("error", res.Error).Msg("zoning failed")
		return res, jobs, used
	}
	var (
		stages [2]builtin.ZoneStage
		jobs   []store.JobKey
		device string
	)
	for i, name := range p.Zoning.Chain {
		k, ok := z.sched.kernel(name)
		if !ok || len(k.jobs) == 0 {
			return fail(jobs, "%s: zoning.chain[%d]: %q is not a loaded kernel spec with a job", p.Source, i, name)
		}
		j := k.jobs[0]
		bk, ok := j.spec.Evaluator.(*builtin.Kernel)
		if !ok {
			return fail(jobs, "%s: zoning.chain[%d]: %q is not a builtin kernel (zoning composes builtin conv2d or sgemm feeding reduce)", p.Source, i, name)
		}
		jobs = append(jobs, j.key)
		device = bk.Device()
		key := z.servedKey(j)
		used = append(used, key)
		stages[i] = builtin.ZoneStage{Kernel: bk, Dims: j.spec.Problem.Dims, Key: key}
	}
	unlock, err := z.lock(ctx, device)
	if err != nil {
		return fail(jobs, "lock %s: %v", device, err)
	}
	b := p.Zoning.ErrorBudget.Settings()
	zn, err := builtin.Zone(ctx, stages[0], stages[1], builtin.ZoneSettings{Budget: b, Inputs: p.Zoning.Inputs})
	unlock()
	if err != nil {
		return fail(jobs, "%s: %v", p.Source, err)
	}
	res.State, res.Seeds, res.Maps, res.TunedAt, res.Notes = api.ZoningDone, zn.Seeds, len(zn.Maps), z.now().UTC(), zn.Notes
	for _, m := range zn.Maps {
		if m.Passed {
			res.Passed++
		}
	}
	view := func(i int) *api.ZoneMap {
		if i < 0 {
			return nil
		}
		return zoneMapView(zn.Maps[i], p.Zoning.Chain, stages[0].Dims)
	}
	res.Map, res.Default, res.Split = view(zn.Best), view(zn.Default), view(zn.BestWithin([]float64{0.5, 0.5}))
	if res.Map != nil {
		cert, err := z.certify(p, res, device)
		if err != nil {
			return fail(jobs, "certify: %v", err)
		}
		res.Certificate = cert
	}
	z.log.Info().Str("pipeline", p.Name).Int("maps", res.Maps).Int("certified", res.Passed).Msg("zoning tuned")
	return res, jobs, used
}

// zoneMapView is m on the wire: each stage named by its kernel spec, the
// reduce's problem the upstream's output length.
func zoneMapView(m builtin.ZoneMap, chain []string, upDims []int) *api.ZoneMap {
	out := &api.ZoneMap{Bound: m.Bound, Measured: m.Measured, TimeMS: m.TimeMS}
	problem := evaluate.Problem{Dims: upDims}.String()
	for i, s := range m.Stages {
		st := api.ZoneStage{Kernel: chain[i], Problem: problem, Key: s.Key, Precision: s.Map, Bound: s.Bound, TimeMS: s.TimeMS}
		for _, pt := range s.Parts {
			st.Parts = append(st.Parts, api.StageBound{Stage: pt.Stage, Param: pt.Param, Value: pt.Value, Bound: pt.Bound, Formula: pt.How})
		}
		out.Stages = append(out.Stages, st)
		problem = "" // the reduce sums what the upstream produced
	}
	return out
}

// certify signs the certificate of res's map: its error_budget check
// records each stage's format and bound, the composed bound and the
// measured error.
func (z *zoner) certify(p *spec.Pipeline, res api.Zoning, device string) (string, error) {
	m := res.Map
	sum := sha256.Sum256(p.Raw)
	pm := map[string]any{}
	cfg := map[string]any{}
	var keys []string
	stages := make([]any, len(m.Stages))
	for i, st := range m.Stages {
		keys = append(keys, st.Kernel+" "+st.Key)
		for k, v := range st.Precision {
			pm[st.Kernel+"."+k] = v
		}
		cfg[st.Kernel] = st.Key
		parts := make([]any, len(st.Parts))
		for j, pt := range st.Parts {
			parts[j] = map[string]any{"stage": pt.Stage, "param": pt.Param, "value": pt.Value, "bound": pt.Bound, "formula": pt.Formula}
		}
		stages[i] = map[string]any{"kernel": st.Kernel, "precision": st.Precision, "bound": st.Bound, "parts": parts}
	}
	c := &certs.Certificate{
		Job:    certs.Job{Kernel: "pipeline/" + p.Name, SpecHash: hex.EncodeToString(sum[:]), Problem: m.Stages[0].Problem, Device: device},
		Key:    strings.Join(keys, " | "),
		Config: cfg,
		Checks: []certs.Check{{
			Name: "error_budget", Passed: m.Bound <= res.Budget.Value && m.Measured <= res.Budget.Value,
			Inputs: map[string]any{"kind": res.Budget.Kind, "budget": res.Budget.Value, "precision_map": pm, "chain": res.Chain,
				"seeds": res.Seeds, "inputs": res.Inputs, "composition": "the upstream's per-output bound summed (it passes through the sum unamplified) + the reduce's own bound on the values it received"},
			Results: map[string]any{"bound": m.Bound, "measured_err": m.Measured, "stages": stages},
		}},
		Latency:  certs.Latency{Samples: 1, MedianMS: m.TimeMS, TimesMS: []float64{m.TimeMS}},
		IssuedAt: res.TunedAt,
	}
	if err := certs.Sign(c, z.key); err != nil {
		return "", err
	}
	b, err := c.Encode()
	return string(b), err
}

func (s *server) getZoning(r *http.Request) (any, error) {
	return s.zoner.get(r.PathValue("pipeline"))
}

func (s *server) postRezone(r *http.Request) (any, error) {
	s.sched.mu.Lock()
	ctx := s.sched.ctx
	s.sched.mu.Unlock()
	if ctx == nil {
		return nil, fmt.Errorf("zoning: %w: not started", api.ErrUnavailable)
	}
	return s.zoner.rezone(ctx, r.PathValue("pipeline"))
}

// jobsChanged tunes again the zoned pipelines one of jobs is in whose
// served configs are no longer the ones their map was tuned at (a new
// cycle promoted another). Called from scheduler.changed, maybe under its
// lock: the work is done apart.
func (z *zoner) jobsChanged(ctx context.Context, jobs ...store.JobKey) {
	z.mu.Lock()
	var hit []string
	for name, r := range z.runs {
		for _, k := range jobs {
			if slices.Contains(r.jobs, k) {
				hit = append(hit, name)
				break
			}
		}
	}
	z.mu.Unlock()
	if len(hit) == 0 {
		return
	}
	go func() {
		for _, name := range hit {
			p, ok := z.sched.pipeline(name)
			if !ok || p.Zoning == nil {
				continue
			}
			now := z.servedKeys(p) // reads the scheduler: not under z.mu
			z.mu.Lock()
			// A tuning in flight may have read the configs before the
			// change: it starts again too.
			r := z.runs[name]
			if r != nil && (r.res.State == api.ZoningTuning || !slices.Equal(r.used, now)) {
				z.startLocked(ctx, p)
			}
			z.mu.Unlock()
		}
	}()
}

// servedKeys are the configs p's chain kernels' first jobs serve now (or
// their defaults), as tune reads them.
func (z *zoner) servedKeys(p *spec.Pipeline) []string {
	var out []string
	for _, name := range p.Zoning.Chain {
		k, ok := z.sched.kernel(name)
		if !ok || len(k.jobs) == 0 {
			return nil
		}
		out = append(out, z.servedKey(k.jobs[0]))
	}
	return out
}

// servedKey is j's served config key, or its default's.
func (z *zoner) servedKey(j *job) string {
	if sv, ok, err := z.sched.st.Served(j.key); err == nil && ok {
		return sv.Key
	}
	return j.spec.Space.Key(j.spec.Default)
}
