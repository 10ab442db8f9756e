package daemon

import (
	"encoding/json"
	"slices"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// zoneState is a pipeline's zoning as kept in the state file (the result
// of store.Zoning): the answer served, and what a fallback needs.
type zoneState struct {
	Zoning api.Zoning `json:"zoning"`
	// Certified are the maps certified and not revoked, fastest first:
	// Zoning.Map, then the fallbacks.
	Certified []api.ZoneMap `json:"certified,omitempty"`
	Device    string        `json:"device"`
}

// persistLocked stores r's zoning in the state file. A failure costs the
// restart a tuning, no more: it is logged.
func (z *zoner) persistLocked(r *zoneRun) {
	res := r.res
	res.Restored = false
	raw, err := json.Marshal(zoneState{Zoning: res, Certified: r.certified, Device: r.device})
	if err == nil {
		jobs := make([]string, len(r.jobs))
		for i, j := range r.jobs {
			jobs[i] = j.String()
		}
		err = z.sched.st.PutZoning(store.Zoning{Pipeline: res.Pipeline, Section: r.section, Jobs: jobs, Configs: r.used, TunedAt: res.TunedAt, Result: raw})
	}
	if err != nil {
		z.log.Error().Err(err).Str("pipeline", res.Pipeline).Msg("zoning not stored; a restart tunes it again")
	}
}

// restoreLocked serves p's stored zoning, when the state file holds one
// tuned against p's zoning section and the configs c's kernels serve now,
// whose map's certificate is not revoked; it reports whether it did.
func (z *zoner) restoreLocked(p *spec.Pipeline, c zoneChain) bool {
	if c.err != "" {
		return false
	}
	rec, ok, err := z.sched.st.Zoning(p.Name)
	if err != nil {
		z.log.Warn().Err(err).Str("pipeline", p.Name).Msg("stored zoning unreadable; tuning it again")
		return false
	}
	jobs := make([]string, len(c.jobs))
	for i, j := range c.jobs {
		jobs[i] = j.String()
	}
	if !ok || rec.Section != zoneSection(p) || !slices.Equal(rec.Jobs, jobs) || !slices.Equal(rec.Configs, c.used) {
		return false
	}
	var st zoneState
	if err := json.Unmarshal(rec.Result, &st); err != nil || st.Zoning.State != api.ZoningDone || st.Zoning.Pipeline != p.Name {
		z.log.Warn().Str("pipeline", p.Name).Msg("stored zoning is not a done zoning of the pipeline; tuning it again")
		return false
	}
	if m := st.Zoning.Map; m != nil && slices.ContainsFunc(m.Stages, func(s api.ZoneStage) bool { return s.Unit == "" }) {
		return false // tuned before stages recorded the limits a runtime's report is checked against
	}
	if id := st.Zoning.CertificateID; id != "" {
		if _, meta, err := z.sched.st.Cert(id); err != nil || meta.Revoked {
			return false // its certificate is gone or revoked: a fresh tuning
		}
	}
	// A map whose certificate was revoked since (an older one, or by a
	// fleet node) is no fallback.
	live, err := z.liveMaps(p.Name, st.Certified)
	if err != nil {
		z.log.Warn().Err(err).Str("pipeline", p.Name).Msg("revoked zoning certificates unreadable; tuning it again")
		return false
	}
	st.Certified = live
	st.Zoning.Restored = true
	z.runs[p.Name] = &zoneRun{section: rec.Section, res: st.Zoning, jobs: c.jobs, used: c.used, certified: st.Certified, device: st.Device, cancel: func() {}}
	z.lookupsChanged(c.jobs...)
	z.log.Info().Str("pipeline", p.Name).Time("tuned_at", st.Zoning.TunedAt).Msg("zoning restored from the state file")
	return true
}

// revokedMaps are the keys of pipeline's maps whose zoning certificate is
// revoked.
func (z *zoner) revokedMaps(pipeline string) (map[string]bool, error) {
	metas, err := z.sched.st.Certs()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, m := range metas {
		if m.Revoked && m.Job.Kernel == zoningKernel(pipeline) {
			out[m.Key] = true
		}
	}
	return out, nil
}

// revokedSince reports whether pipeline's map key has a revoked zoning
// certificate now; an unreadable store counts as revoked, so that nothing
// unchecked is served.
func (z *zoner) revokedSince(pipeline, key string) bool {
	revoked, err := z.revokedMaps(pipeline)
	if err != nil {
		z.log.Error().Err(err).Str("pipeline", pipeline).Msg("revoked zoning certificates unreadable")
		return true
	}
	return revoked[key]
}
