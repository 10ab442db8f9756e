package daemon

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// zoner tunes the precision maps of the pipelines that declare a zoning
// section: once per zoning section as loaded (a reload that changes the
// section tunes again), whenever a chain kernel's served config changes,
// and on POST /v1/pipelines/{pipeline}/zoning; a map stays served while
// its pipeline is tuned again. Each tuned zoning is kept in the state file
// (zoning_store.go): a start serves it again without measuring while the
// section and the served configs it was tuned against are the same. The
// served map's certificate is in the certificate store; a revocation of it
// falls back to the next certified map (zoning_revoke.go). Lock order:
// scheduler.mu may be held while z.mu is taken (changed calls
// jobsChanged), never the other way round.
type zoner struct {
	sched *scheduler
	key   ed25519.PrivateKey
	lock  func(ctx context.Context, device string) (func(), error)
	log   zerolog.Logger
	now   func() time.Time
	// ctx is the daemon's: tunings queued by a revocation run under it
	// (nil in tests that queue none).
	ctx context.Context

	mu   sync.Mutex
	runs map[string]*zoneRun // by pipeline name
}

// zoneRun is one pipeline's zoning: the zoning section it was tuned for,
// and where its tuning stands.
type zoneRun struct {
	section string
	res     api.Zoning
	jobs    []store.JobKey // the chain kernels' jobs, whose lookups carry the map
	used    []string       // their configs the map was tuned at
	// certified are the maps certified by the last tuning that are not
	// revoked, fastest first: res.Map, then the fallbacks.
	certified []api.ZoneMap
	device    string
	cancel    context.CancelFunc
}

// zoneSection is p's zoning section in a canonical form: what a tuned
// map depends on in the pipeline file.
func zoneSection(p *spec.Pipeline) string {
	b := p.Zoning.ErrorBudget.Settings()
	return fmt.Sprintf("chain=%s budget=%s:%s inputs=%s", strings.Join(p.Zoning.Chain, ","), b.Kind,
		strconv.FormatFloat(b.Value, 'g', -1, 64), cmp.Or(p.Zoning.Inputs, evaluate.InputsSigned))
}

// update starts tuning each zoned pipeline whose zoning section is new or
// changed, unless the state file holds its zoning tuned against the same
// section and served configs, and forgets the pipelines no longer zoned.
func (z *zoner) update(ctx context.Context, pipes []*spec.Pipeline) {
	// The chains' jobs and served configs, read before z.mu (lock order).
	chains := map[string]zoneChain{}
	for _, p := range pipes {
		if p.Zoning != nil {
			chains[p.Name] = z.chain(p)
		}
	}
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
		if r := z.runs[p.Name]; r != nil && r.section == zoneSection(p) && !z.staleLocked(r, chains[p.Name]) {
			continue
		}
		if z.runs[p.Name] == nil && z.restoreLocked(p, chains[p.Name]) {
			continue
		}
		z.startLocked(ctx, p)
	}
	for name, r := range z.runs {
		if !keep[name] {
			r.cancel()
			delete(z.runs, name)
			z.lookupsChanged(r.jobs...)
		}
	}
}

// staleLocked says whether r, tuned for the same zoning section, is to be
// tuned again: it failed (a kernel missing then may be loaded now), or
// the chain's jobs (a kernel spec changed or went) or served configs are
// not the ones it was tuned at. A tuning in flight checks those itself
// when it ends.
func (z *zoner) staleLocked(r *zoneRun, c zoneChain) bool {
	switch r.res.State {
	case api.ZoningTuning:
		return false
	case api.ZoningFailed:
		return true
	}
	return !slices.Equal(r.jobs, c.jobs) || !slices.Equal(r.used, c.used)
}

// startLocked starts tuning p, cancelling a tuning of it in flight.
func (z *zoner) startLocked(ctx context.Context, p *spec.Pipeline) {
	if r := z.runs[p.Name]; r != nil {
		r.cancel()
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	section := zoneSection(p)
	b := p.Zoning.ErrorBudget.Settings()
	r := &zoneRun{section: section, cancel: cancel, res: api.Zoning{
		Pipeline: p.Name, State: api.ZoningTuning, Chain: append([]string{}, p.Zoning.Chain...),
		Budget: api.Budget{Kind: b.Kind, Value: b.Value}, Inputs: cmp.Or(p.Zoning.Inputs, evaluate.InputsSigned),
	}}
	if old := z.runs[p.Name]; old != nil && old.section == section && old.res.Map != nil {
		// Tuning again for new served configs, or after a revocation: the
		// map served stays served until the new one is done.
		prev := old.res
		prev.State, prev.Restored = api.ZoningTuning, false
		r.res, r.jobs, r.used, r.certified, r.device = prev, old.jobs, old.used, old.certified, old.device
	}
	z.runs[p.Name] = r
	// The tuning's own answer, built here: a fallback may rewrite r.res
	// (under z.mu) while it runs.
	fresh := r.res
	fresh.Map, fresh.Default, fresh.Split, fresh.Certificate, fresh.CertificateID, fresh.Notes, fresh.Error = nil, nil, nil, "", "", nil, ""
	fresh.Maps, fresh.Passed, fresh.Revoked = 0, 0, nil
	go func() {
		t := z.tune(ctx, p, fresh)
		// The configs served now (read before z.mu): one promoted while
		// the tuning ran tunes again, at it. This also covers a first
		// tuning, which has no jobs yet for jobsChanged to match.
		now := z.chain(p)
		z.mu.Lock()
		switch {
		case z.runs[p.Name] != r || ctx.Err() != nil:
		case now.err == "" && (!slices.Equal(now.jobs, t.jobs) || !slices.Equal(now.used, t.used)):
			z.startLocked(parent, p)
		case t.res.Map != nil && z.revokedSince(p.Name, t.res.Map.Key()):
			// Revoked while the tuning ran (an older certificate of the
			// same map): tune again, which leaves it out.
			z.startLocked(parent, p)
		case t.res.State == api.ZoningFailed && !t.unresolved && r.res.Map != nil && r.res.CertificateID != "":
			// The map served stays served, with what it was tuned
			// against: the answer only says why the new tuning failed.
			r.res.State, r.res.Error = api.ZoningDone, "tuning again failed: "+t.res.Error
		default:
			r.res, r.jobs, r.used, r.certified, r.device = t.res, t.jobs, t.used, t.certified, t.device
			if r.res.State == api.ZoningDone {
				z.persistLocked(r)
			}
		}
		z.mu.Unlock()
		z.lookupsChanged(t.jobs...)
	}()
}

// lookupsChanged says that the zones the lookups of jobs carry changed:
// the lookup index drops its answers of them, and runtimes waiting for a
// change wake.
func (z *zoner) lookupsChanged(jobs ...store.JobKey) {
	z.sched.index.invalidate(jobs...)
	z.sched.epoch.Add(1)
}

// rezone tunes the named pipeline again now.
func (z *zoner) rezone(ctx context.Context, name string) (api.Zoning, error) {
	p, ok := z.sched.pipeline(name)
	if !ok {
		return api.Zoning{}, sockapi.NotFoundf("pipeline %q is not declared", name)
	}
	if p.Zoning == nil {
		return api.Zoning{}, sockapi.NotFoundf("pipeline %q has no zoning section (%s)", name, p.Source)
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
		return api.Zoning{}, sockapi.NotFoundf("pipeline %q is not declared", name)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	r := z.runs[name]
	if p.Zoning == nil || r == nil {
		return api.Zoning{}, sockapi.NotFoundf("pipeline %q has no zoning section (%s)", name, p.Source)
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
		if r.res.Map == nil || r.res.CertificateID == "" {
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

// zoneChain is a chain's kernels' first jobs and the configs they serve
// (or their defaults); err says why p's chain does not resolve.
type zoneChain struct {
	jobs   []store.JobKey
	used   []string
	stages []builtin.ZoneStage
	device string
	err    string
}

// chain resolves p's chain to the kernels' first jobs and their served
// configs. It reads the scheduler: never under z.mu.
func (z *zoner) chain(p *spec.Pipeline) zoneChain {
	var c zoneChain
	for i, name := range p.Zoning.Chain {
		k, ok := z.sched.kernel(name)
		if !ok || len(k.jobs) == 0 {
			c.err = fmt.Sprintf("%s: zoning.chain[%d]: %q is not a loaded kernel spec with a job", p.Source, i, name)
			return c
		}
		j := k.jobs[0]
		bk, ok := j.spec.Evaluator.(*builtin.Kernel)
		if !ok {
			c.err = fmt.Sprintf("%s: zoning.chain[%d]: %q is not a builtin kernel (zoning composes builtin conv2d or sgemm feeding reduce)", p.Source, i, name)
			return c
		}
		c.jobs = append(c.jobs, j.key)
		c.device = bk.Device()
		key := z.servedKey(j)
		c.used = append(c.used, key)
		c.stages = append(c.stages, builtin.ZoneStage{Kernel: bk, Dims: j.spec.Problem.Dims, Key: key})
	}
	return c
}

// tuned is what one tuning of a pipeline gives.
type tuned struct {
	res        api.Zoning
	unresolved bool // the chain's kernels are not all loaded: no map of it stays
	jobs       []store.JobKey
	used       []string
	certified  []api.ZoneMap
	device     string
}

// tune zones p's chain at its kernels' served configs and certifies the
// fastest certified map that was never revoked.
func (z *zoner) tune(ctx context.Context, p *spec.Pipeline, res api.Zoning) tuned {
	c := z.chain(p)
	t := tuned{jobs: c.jobs, used: c.used, device: c.device}
	fail := func(format string, args ...any) tuned {
		// Nothing uncertified is served: a map whose certificate could not
		// be made is dropped with it.
		res.State, res.Error = api.ZoningFailed, fmt.Sprintf(format, args...)
		res.Map, res.Certificate, res.CertificateID = nil, "", ""
		t.certified = nil
		z.log.Warn().Str("pipeline", p.Name).Str("error", res.Error).Msg("zoning failed")
		t.res = res
		return t
	}
	if c.err != "" {
		t.unresolved = true
		return fail("%s", c.err)
	}
	unlock, err := z.lock(ctx, c.device)
	if err != nil {
		return fail("lock %s: %v", c.device, err)
	}
	b := p.Zoning.ErrorBudget.Settings()
	zn, err := builtin.Zone(ctx, c.stages[0], c.stages[1], builtin.ZoneSettings{Budget: b, Inputs: p.Zoning.Inputs})
	unlock()
	if err != nil {
		return fail("%s: %v", p.Source, err)
	}
	res.State, res.Seeds, res.Maps, res.TunedAt, res.Notes = api.ZoningDone, zn.Seeds, len(zn.Maps), z.now().UTC(), zn.Notes
	revoked, err := z.revokedMaps(p.Name)
	if err != nil {
		return fail("read revoked maps: %v", err)
	}
	res.Revoked = slices.Sorted(maps.Keys(revoked))
	for _, m := range zn.Maps {
		if !m.Passed {
			continue
		}
		res.Passed++
		v := zoneMapView(m, p.Zoning.Chain, c.stages[0].Dims, zn.N)
		if !revoked[v.Key()] {
			t.certified = append(t.certified, *v)
		}
	}
	slices.SortStableFunc(t.certified, func(a, b api.ZoneMap) int { return cmp.Compare(a.TimeMS, b.TimeMS) })
	view := func(i int) *api.ZoneMap {
		if i < 0 {
			return nil
		}
		return zoneMapView(zn.Maps[i], p.Zoning.Chain, c.stages[0].Dims, zn.N)
	}
	res.Default, res.Split = view(zn.Default), view(zn.BestWithin([]float64{0.5, 0.5}))
	if len(t.certified) > 0 {
		m := t.certified[0]
		res.Map = &m
		if err := z.certifyMap(p, &res, c.device, res.TunedAt); err != nil {
			return fail("certify: %v", err)
		}
	}
	z.log.Info().Str("pipeline", p.Name).Int("maps", res.Maps).Int("certified", res.Passed).Int("revoked", len(res.Revoked)).Msg("zoning tuned")
	t.res = res
	return t
}

// zoneMapView is m on the wire: each stage named by its kernel spec, the
// reduce's problem the upstream's output length n.
func zoneMapView(m builtin.ZoneMap, chain []string, upDims []int, n int) *api.ZoneMap {
	out := &api.ZoneMap{Bound: m.Bound, Measured: m.Measured, TimeMS: m.TimeMS}
	problems := []string{evaluate.Problem{Dims: upDims}.String(), evaluate.Problem{Dims: []int{n}}.String()}
	for i, s := range m.Stages {
		st := api.ZoneStage{Kernel: chain[i], Problem: problems[i], Key: s.Key, Precision: s.Map, Bound: s.Bound, Limit: s.Limit, Unit: s.Unit, TimeMS: s.TimeMS}
		for _, pt := range s.Parts {
			st.Parts = append(st.Parts, api.StageBound{Stage: pt.Stage, Param: pt.Param, Value: pt.Value, Bound: pt.Bound, Formula: pt.How})
		}
		out.Stages = append(out.Stages, st)
	}
	return out
}

// certifyMap signs the certificate of res.Map, stores it in the
// certificate store (under the job pipeline/<name>) and sets res's
// Certificate and CertificateID.
func (z *zoner) certifyMap(p *spec.Pipeline, res *api.Zoning, device string, issued time.Time) error {
	c, err := z.certify(p, *res, device, issued)
	if err != nil {
		return err
	}
	body, err := c.Encode()
	if err != nil {
		return err
	}
	job := store.JobKey{Kernel: c.Job.Kernel, SpecHash: c.Job.SpecHash, Problem: c.Job.Problem, Device: c.Job.Device}
	meta := store.CertMeta{ID: c.ID, Key: c.Key, TimeMS: c.Latency.MedianMS, IssuedAt: c.IssuedAt}
	if err := z.sched.st.PutCert(job, meta, body); err != nil {
		return err
	}
	res.Certificate, res.CertificateID = string(body), c.ID
	return nil
}

// zoningKernel is the kernel name of a pipeline's zoning certificates.
func zoningKernel(pipeline string) string { return "pipeline/" + pipeline }

// certify signs the certificate of res's map: its error_budget check
// records each stage's format and bound, the composed bound and the
// measured error.
func (z *zoner) certify(p *spec.Pipeline, res api.Zoning, device string, issued time.Time) (*certs.Certificate, error) {
	m := res.Map
	sum := sha256.Sum256(p.Raw)
	pm := map[string]any{}
	cfg := map[string]any{}
	stages := make([]any, len(m.Stages))
	for i, st := range m.Stages {
		for k, v := range st.Precision {
			pm[st.Kernel+"."+k] = v
		}
		cfg[st.Kernel] = st.Key
		parts := make([]any, len(st.Parts))
		for j, pt := range st.Parts {
			parts[j] = map[string]any{"stage": pt.Stage, "param": pt.Param, "value": pt.Value, "bound": pt.Bound, "formula": pt.Formula}
		}
		stages[i] = map[string]any{"kernel": st.Kernel, "problem": st.Problem, "precision": st.Precision, "bound": st.Bound, "limit": st.Limit, "unit": st.Unit, "parts": parts}
	}
	c := &certs.Certificate{
		Job:    certs.Job{Kernel: zoningKernel(p.Name), SpecHash: hex.EncodeToString(sum[:]), Problem: m.Stages[0].Problem, Device: device},
		Key:    m.Key(),
		Config: cfg,
		Checks: []certs.Check{{
			Name: "error_budget", Passed: m.Bound <= res.Budget.Value && m.Measured <= res.Budget.Value,
			Inputs: map[string]any{"kind": res.Budget.Kind, "budget": res.Budget.Value, "precision_map": pm, "chain": res.Chain,
				"seeds": res.Seeds, "inputs": res.Inputs, "composition": "the upstream's per-output bound summed (it passes through the sum unamplified) + the reduce's own bound on the values it received"},
			Results: map[string]any{"bound": m.Bound, "measured_err": m.Measured, "stages": stages},
		}},
		Latency:  certs.Latency{Samples: 1, MedianMS: m.TimeMS, TimesMS: []float64{m.TimeMS}},
		IssuedAt: issued,
	}
	if err := certs.Sign(c, z.key); err != nil {
		return nil, err
	}
	return c, nil
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
			now := z.chain(p).used // reads the scheduler: not under z.mu
			z.mu.Lock()
			// A tuning in flight is left to end: it compares the configs
			// it read with those served then, and starts again only if
			// one changed (restarting it on every call, at each cycle's
			// end, a slow zoning would never end).
			r := z.runs[name]
			if r != nil && r.res.State != api.ZoningTuning && !slices.Equal(r.used, now) {
				z.startLocked(ctx, p)
			}
			z.mu.Unlock()
		}
	}()
}

// servedKey is j's served config key, or its default's.
func (z *zoner) servedKey(j *job) string {
	if sv, ok, err := z.sched.st.Served(j.key); err == nil && ok {
		return sv.Key
	}
	return j.spec.Space.Key(j.spec.Default)
}
