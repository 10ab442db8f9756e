package daemon

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
)

// Observation rate limits: a token bucket per uid. A request costs one
// token and one more per observeTokenLatencies latencies it carries, so a
// runtime reporting a few runs a second never notices, and one uid cannot
// make the daemon write faster than the rate.
const (
	DefaultObserveRate    = 10.0 // tokens a second
	DefaultObserveBurst   = 200  // tokens: a request of api's largest batch fits
	observeTokenLatencies = 1000
)

// Observations and drift.
const (
	// maxObservations bounds what is kept per job; older ones are dropped.
	maxObservations = 10000
	// maxLatencies bounds one request.
	maxLatencies = 100000
	// driftWindow is how many of the newest observations of the served
	// config are compared with its certificate.
	driftWindow = 20
)

// postObservations stores what runtimes measured and checks each job it
// touched for drift. The whole batch is checked before anything is stored.
// Any local uid may call it (right observe): it only adds to the bounded
// observations of jobs that exist, at a rate limited per uid.
func (s *server) postObservations(r *http.Request) (any, error) {
	var req api.ObservationsRequest
	if err := sockapi.DecodeBody(r, &req); err != nil {
		return nil, err
	}
	if len(req.Observations) == 0 {
		return nil, sockapi.Invalidf("observations: empty")
	}
	type batch struct {
		j   *job
		obs []store.Observation
	}
	var batches []*batch
	var reports []errorReport
	byJob := map[string]*batch{}
	now := time.Now().UTC()
	total := 0
	for i, o := range req.Observations {
		k, ok := s.sched.kernel(o.Kernel)
		if !ok {
			return nil, sockapi.NotFoundf("observations[%d].kernel: %q is not loaded", i, o.Kernel)
		}
		dims, err := parseProblem(o.Problem)
		if err != nil {
			return nil, sockapi.Invalidf("observations[%d].problem %q: %v", i, o.Problem, err)
		}
		problem := evaluate.Problem{Dims: dims}.String()
		var j *job
		for _, jj := range k.jobs {
			if jj.key.Problem == problem && (o.Device == "" || o.Device == jj.key.Device) {
				j = jj
				break
			}
		}
		if j == nil {
			return nil, sockapi.NotFoundf("observations[%d]: kernel %q has no job at problem %s on device %q", i, o.Kernel, o.Problem, o.Device)
		}
		if _, err := j.spec.Space.ParseKey(o.Key); err != nil {
			return nil, sockapi.Invalidf("observations[%d].key %q: %v", i, o.Key, err)
		}
		if len(o.LatenciesMS) == 0 {
			return nil, sockapi.Invalidf("observations[%d].latencies_ms: empty", i)
		}
		b := byJob[j.key.String()]
		if b == nil {
			b = &batch{j: j}
			byJob[j.key.String()] = b
			batches = append(batches, b)
		}
		if !(o.Error >= 0) || math.IsInf(o.Error, 0) {
			return nil, sockapi.Invalidf("observations[%d].error: %v is not a finite error >= 0", i, o.Error)
		}
		if o.Error > 0 {
			// One report per job and config: the largest error, counted.
			if n := slices.IndexFunc(reports, func(r errorReport) bool { return r.j == j && r.key == o.Key }); n >= 0 {
				reports[n].n++
				if o.Error > reports[n].err {
					reports[n].err, reports[n].source = o.Error, o.Source
				}
			} else {
				reports = append(reports, errorReport{j: j, key: o.Key, err: o.Error, source: o.Source, n: 1})
			}
		}
		for n, l := range o.LatenciesMS {
			if !(l > 0) || math.IsInf(l, 0) {
				return nil, sockapi.Invalidf("observations[%d].latencies_ms[%d]: %v is not a positive time", i, n, l)
			}
			total++
			if total > maxLatencies {
				return nil, sockapi.Invalidf("observations: over %d latencies in one request", maxLatencies)
			}
			b.obs = append(b.obs, store.Observation{At: now, LatencyMS: l, Key: o.Key, Source: o.Source})
		}
	}
	// Beyond the request's token, big batches cost one more per
	// observeTokenLatencies latencies.
	if total >= observeTokenLatencies {
		if err := s.api.Spend(r, float64(total/observeTokenLatencies)); err != nil {
			return nil, err
		}
	}
	resp := api.ObservationsResponse{Drift: []string{}, Revoked: []string{}}
	for _, b := range batches {
		if err := s.st.AddObservations(b.j.key, b.obs, maxObservations); err != nil {
			return nil, err
		}
		resp.Stored += len(b.obs)
	}
	// Errors first: a revoked config's latencies say nothing of drift.
	if len(reports) > 0 {
		cred, ok := sockapi.Peer(r)
		if !ok {
			return nil, sockapi.Permissionf("error reports need a local peer whose uid the socket reports")
		}
		operator := s.api.MayWrite(r)
		for _, rep := range reports {
			revoked, checking, err := s.reportError(rep, cred.UID, operator, now)
			if err != nil {
				return nil, err
			}
			resp.Revoked = append(resp.Revoked, revoked...)
			for _, id := range checking {
				if !slices.Contains(resp.Checking, id) {
					resp.Checking = append(resp.Checking, id)
				}
			}
		}
	}
	for _, b := range batches {
		drifting, err := s.checkDrift(b.j, now)
		if err != nil {
			return nil, err
		}
		if drifting {
			resp.Drift = append(resp.Drift, b.j.key.String())
		}
	}
	return resp, nil
}

// checkDrift compares the newest observations of a job's served config,
// made since it was promoted, with its certificate: when their median is
// above the certified p95 over driftWindow runs, the served config is
// marked stale and a re-tune is queued; the cycle's promotion (a new
// config, or the same one re-verified) clears the mark.
func (s *server) checkDrift(j *job, now time.Time) (bool, error) {
	sv, ok, err := s.st.Served(j.key)
	if err != nil || !ok || sv.Stale != "" || sv.Certificate == "" {
		return false, err
	}
	body, _, err := s.st.Cert(sv.Certificate)
	if err != nil {
		return false, err
	}
	cert, err := certs.Decode(body)
	if err != nil {
		return false, fmt.Errorf("certificate %s: %w", sv.Certificate, err)
	}
	p95 := cert.Latency.P95MS
	if !(p95 > 0) {
		return false, nil
	}
	obs, err := s.st.Observations(j.key, maxObservations)
	if err != nil {
		return false, err
	}
	var lat []float64
	for i := len(obs) - 1; i >= 0 && len(lat) < driftWindow; i-- {
		if o := obs[i]; o.Key == sv.Key && !o.At.Before(sv.PromotedAt) {
			lat = append(lat, o.LatencyMS)
		}
	}
	if len(lat) < driftWindow {
		return false, nil
	}
	slices.Sort(lat)
	med := (lat[(len(lat)-1)/2] + lat[len(lat)/2]) / 2
	if med <= p95 {
		return false, nil
	}
	sv.Stale = fmt.Sprintf("drift: runtimes saw a median of %.4g ms over the last %d runs of %s, above its certified p95 of %.4g ms", med, len(lat), sv.Key, p95)
	sv.StaleAt = now
	if err := s.st.PutServed(j.key, sv); err != nil {
		return false, err
	}
	s.sched.changed(j.key)
	s.log.Warn().Str("job_id", j.key.String()).Str("reason", sv.Stale).Msg("served config drifting; re-tuning")
	if err := s.sched.trigger(j.key.String(), runRequest{trigger: "drift"}); err != nil {
		s.log.Error().Err(err).Str("job_id", j.key.String()).Msg("re-tune not queued")
	}
	return true, nil
}
