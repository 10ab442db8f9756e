package daemon

import (
	"fmt"
	"slices"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// checkError revokes the certificate of each served zoned map one of whose
// stages runs rep's kernel at rep's problem and config (the reduce's
// problem is the upstream's output length, which it sums in the chain),
// when rep's error is above the limit the map certified for that stage
// (api.ZoneStage.Limit). The error is in the unit of rep's job's
// verify.error_budget; a report in another unit than the stage's is
// logged and ignored. The pipeline falls back at once to its next
// certified map, or to none, and a tuning is queued which certifies no
// revoked map again. why is the evidence the daemon acts on (evidence.go);
// without apply nothing is revoked or logged. It returns the certificates'
// ids revoked (or, without apply, that would be).
func (z *zoner) checkError(rep errorReport, why string, apply bool) ([]string, error) {
	pipes := z.sched.pipelines() // before z.mu (lock order)
	unit := rep.j.spec.Spec.Verify.ErrorBudget.Settings().Kind
	z.mu.Lock()
	defer z.mu.Unlock()
	var ids []string
	for _, p := range pipes {
		r := z.runs[p.Name]
		if p.Zoning == nil || r == nil || r.res.Map == nil || r.res.CertificateID == "" {
			continue
		}
		for i, st := range r.res.Map.Stages {
			k := rep.j.key
			if i >= len(r.jobs) || k.Kernel != r.jobs[i].Kernel || k.Device != r.jobs[i].Device || k.Problem != st.Problem || st.Key != rep.key {
				continue
			}
			if unit != st.Unit {
				if !apply {
					continue
				}
				z.log.Warn().Str("pipeline", p.Name).Str("kernel", k.Kernel).Str("unit", unit).Str("stage_unit", st.Unit).Float64("error", rep.err).
					Msg("zoning: a runtime's error is not in the unit the zoned stage certifies (its job's verify.error_budget kind); not checked")
				continue
			}
			limit := st.Limit
			if rep.err <= limit {
				continue
			}
			by := "a runtime"
			if rep.source != "" {
				by = fmt.Sprintf("runtime %q", rep.source)
			}
			reason := fmt.Sprintf("error: %s observed a %s error of %.4g in %s %s at %s, above the bound of %.4g pipeline %s's zoned map certified for that stage",
				by, unit, rep.err, st.Kernel, rep.key, st.Problem, limit, p.Name)
			if why != "" {
				reason += "; " + why
			}
			id := r.res.CertificateID
			if !apply {
				ids = append(ids, id)
				break
			}
			if _, err := z.sched.st.Revoke(id, reason, z.now()); err != nil {
				return ids, err
			}
			ids = append(ids, id)
			if err := z.fallbackLocked(p, r, id, reason); err != nil {
				return ids, err
			}
			break
		}
	}
	return ids, nil
}

// revoked is told of a zoning certificate revoked through the API: the
// served map's (whichever of its certificates it is) falls back as
// checkError does (and reports true: a tuning
// is queued); an older certificate's map, certified by this tuning too, is
// dropped from the fallbacks so that it is never served again.
func (z *zoner) revoked(meta store.CertMeta, reason string) (bool, error) {
	pipes := z.sched.pipelines()
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, p := range pipes {
		r := z.runs[p.Name]
		if p.Zoning == nil || r == nil || meta.Job.Kernel != zoningKernel(p.Name) {
			continue
		}
		// A tuning again may have certified the served map anew: revoking
		// an older certificate of the same map revokes the map.
		if cur := r.res.CertificateID; cur == meta.ID || (r.res.Map != nil && cur != "" && r.res.Map.Key() == meta.Key) {
			if cur != meta.ID {
				why := fmt.Sprintf("map %s revoked with its certificate %s: %s", meta.Key, meta.ID, reason)
				if _, err := z.sched.st.Revoke(cur, why, z.now()); err != nil {
					return false, err
				}
			}
			return true, z.fallbackLocked(p, r, cur, reason)
		}
		z.log.Warn().Str("pipeline", p.Name).Str("cert", meta.ID).Str("map", meta.Key).Str("reason", reason).Msg("zoning certificate of a map not served revoked")
		dropMapLocked(r, meta.Key)
		if r.res.State == api.ZoningDone {
			z.persistLocked(r)
		}
	}
	return false, nil
}

// dropMapLocked takes the map keyed key out of r's certified maps and
// lists it as revoked.
func dropMapLocked(r *zoneRun, key string) {
	r.certified = slices.DeleteFunc(slices.Clone(r.certified), func(m api.ZoneMap) bool { return m.Key() == key })
	if !slices.Contains(r.res.Revoked, key) {
		r.res.Revoked = append(slices.Clone(r.res.Revoked), key)
		slices.Sort(r.res.Revoked)
	}
}

// liveMaps are ms less those whose zoning certificate of pipeline is
// revoked in the store (an older one, or one a fleet node revoked).
func (z *zoner) liveMaps(pipeline string, ms []api.ZoneMap) ([]api.ZoneMap, error) {
	revoked, err := z.revokedMaps(pipeline)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(ms), func(m api.ZoneMap) bool { return revoked[m.Key()] }), nil
}

// fallbackLocked drops r's served map, whose certificate id was revoked:
// its next certified map is certified and served at once (none when it has
// none left), the answer is stored, lookups see it, and a tuning is
// queued; the served map stays while it runs.
func (z *zoner) fallbackLocked(p *spec.Pipeline, r *zoneRun, id, reason string) error {
	bad := r.res.Map.Key()
	z.log.Warn().Str("pipeline", p.Name).Str("cert", id).Str("map", bad).Str("reason", reason).Msg("zoning certificate revoked")
	dropMapLocked(r, bad)
	r.res.Map, r.res.Certificate, r.res.CertificateID, r.res.Restored = nil, "", "", false
	if live, err := z.liveMaps(p.Name, r.certified); err == nil {
		r.certified = live
	} else {
		z.log.Error().Err(err).Str("pipeline", p.Name).Msg("revoked zoning certificates unreadable; the fallback is not checked against them")
	}
	var err error
	if len(r.certified) > 0 {
		next := r.certified[0]
		r.res.Map = &next
		if err = z.certifyMap(p, &r.res, r.device, z.now().UTC()); err != nil {
			r.res.Map = nil // not served uncertified
		}
	}
	z.persistLocked(r)
	z.lookupsChanged(r.jobs...)
	if z.ctx != nil {
		z.startLocked(z.ctx, p)
	}
	if err != nil {
		return fmt.Errorf("certify the next map of pipeline %q: %w", p.Name, err)
	}
	return nil
}

// servedCert is the id of the certificate of pipeline's served map, "" when
// none is served.
func (z *zoner) servedCert(pipeline string) string {
	z.mu.Lock()
	defer z.mu.Unlock()
	if r := z.runs[pipeline]; r != nil && r.res.Map != nil {
		return r.res.CertificateID
	}
	return ""
}
