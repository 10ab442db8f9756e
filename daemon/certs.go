package daemon

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// deviceDetails describes the machine behind the CPU device class, for
// certificates: a driver or CPU change is visible in them.
func deviceDetails() map[string]string {
	d := map[string]string{
		"goos": runtime.GOOS, "goarch": runtime.GOARCH, "cpus": strconv.Itoa(runtime.NumCPU()),
		"go": runtime.Version(),
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				d["cpu_model"] = strings.TrimSpace(v)
				break
			}
		}
	}
	return d
}

func (s *server) getCerts(r *http.Request) (any, error) {
	kernel := r.URL.Query().Get("kernel")
	metas, err := s.st.Certs()
	if err != nil {
		return nil, err
	}
	out := api.Certs{Certs: []api.CertSummary{}}
	served := map[string]string{} // job -> served cert
	for _, m := range metas {
		if kernel != "" && m.Job.Kernel != kernel {
			continue
		}
		id := m.Job.String()
		if _, ok := served[id]; !ok {
			sv, _, err := s.st.Served(m.Job)
			if err != nil {
				return nil, err
			}
			served[id] = sv.Certificate
			if p, ok := strings.CutPrefix(m.Job.Kernel, zoningKernel("")); ok && s.zoner != nil {
				served[id] = s.zoner.servedCert(p) // a zoned map's
			}
		}
		cs := api.CertSummary{
			ID: m.ID, Kernel: m.Job.Kernel, Problem: m.Job.Problem, Device: m.Job.Device, Key: m.Key,
			TimeMS: m.TimeMS, IssuedAt: m.IssuedAt, Issuer: s.keyID, Served: served[id] == m.ID,
			Revoked: m.Revoked, Reason: m.Reason,
		}
		if m.Revoked {
			at := m.RevokedAt
			cs.RevokedAt = &at
		}
		out.Certs = append(out.Certs, cs)
	}
	return out, nil
}

// getCert serves a certificate exactly as signed, so it verifies offline.
func (s *server) getCert(w http.ResponseWriter, r *http.Request) {
	body, meta, err := s.st.Cert(r.PathValue("id"))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = sockapi.NotFoundf("certificate %q", r.PathValue("id"))
		}
		sockapi.WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if meta.Revoked {
		w.Header().Set(api.HeaderRevoked, meta.Reason)
	}
	w.Write(body)
}

func (s *server) getPubkey(*http.Request) (any, error) {
	return api.Pubkey{KeyID: s.keyID, Pubkey: certs.FormatPublicKey(s.pub)}, nil
}

// postRevoke revokes a certificate. Its job falls back to the best config
// that still holds a valid certificate, or to the default, and a
// re-verification is queued.
func (s *server) postRevoke(r *http.Request) (any, error) {
	var req api.RevokeRequest
	if err := sockapi.DecodeBody(r, &req); err != nil {
		return nil, err
	}
	req.Reason = strings.TrimSpace(req.Reason)
	if req.Reason == "" {
		return nil, sockapi.Invalidf("reason: required")
	}
	id := r.PathValue("id")
	// Revoking again changes nothing: no second re-verification.
	if _, before, err := s.st.Cert(id); err == nil && before.Revoked {
		resp := api.RevokeResponse{ID: id, Job: before.Job.String(), Match: api.MatchDefault, AlreadyRevoked: true}
		if sv, ok, err := s.st.Served(before.Job); err != nil {
			return nil, err
		} else if ok {
			resp.Served, resp.Cert, resp.Match = sv.Key, sv.Certificate, api.MatchExact
		}
		return resp, nil
	}
	return s.revoke(id, req.Reason, runRequest{trigger: "reverify", certify: true})
}

// revoke revokes certificate id for reason; when its job served it, the
// job falls back to its next certified config, or to the default. Then rr
// is queued for the job.
func (s *server) revoke(id, reason string, rr runRequest) (api.RevokeResponse, error) {
	meta, err := s.st.Revoke(id, reason, time.Now())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return api.RevokeResponse{}, sockapi.NotFoundf("certificate %q", id)
		}
		return api.RevokeResponse{}, err
	}
	s.log.Warn().Str("cert", id).Str("job_id", meta.Job.String()).Str("reason", reason).Msg("certificate revoked")
	if strings.HasPrefix(meta.Job.Kernel, zoningKernel("")) && s.zoner != nil {
		// A zoned map's: the pipeline falls back and tunes again.
		resp := api.RevokeResponse{ID: id, Job: meta.Job.String(), Match: api.MatchDefault}
		hit, err := s.zoner.revoked(meta, reason)
		resp.Requeued = hit
		return resp, err
	}
	// The store took the point off the job's front as it revoked it: the
	// cached answers go whatever happens below.
	defer s.sched.changed(meta.Job)
	resp := api.RevokeResponse{ID: id, Job: meta.Job.String(), Match: api.MatchDefault}
	sv, ok, err := s.st.Served(meta.Job)
	if err != nil {
		return resp, err
	}
	if ok && sv.Certificate == id {
		next, err := s.nextCertified(meta.Job)
		if err != nil {
			return resp, err
		}
		if next == nil {
			if err := s.st.ClearServed(meta.Job); err != nil {
				return resp, err
			}
		} else {
			// Its certificate's time, as a promotion serves it.
			nsv := store.Served{Key: next.Key, TimeMS: next.TimeMS, CILowMS: next.CILowMS, CIHighMS: next.CIHighMS, Speedup: next.Speedup,
				PromotedAt: time.Now(), Certificate: next.ID, Front: sv.Front}
			if err := s.st.PutServed(meta.Job, nsv); err != nil {
				return resp, err
			}
		}
	}
	if sv, ok, err := s.st.Served(meta.Job); err != nil {
		return resp, err
	} else if ok {
		resp.Served, resp.Cert, resp.Match = sv.Key, sv.Certificate, api.MatchExact
	}
	err = s.sched.trigger(meta.Job.String(), rr)
	resp.Requeued = err == nil
	return resp, nil
}

// nextCertified is the job's best config with a live certificate, or nil.
func (s *server) nextCertified(job store.JobKey) (*store.CertMeta, error) {
	metas, err := s.st.JobCerts(job)
	if err != nil {
		return nil, err
	}
	revokedKey := map[string]bool{}
	for _, m := range metas {
		if m.Revoked {
			revokedKey[m.Key] = true
		}
	}
	for _, m := range metas {
		if !m.Revoked && !revokedKey[m.Key] {
			return &m, nil
		}
	}
	return nil, nil
}

func (s *server) setKey(key ed25519.PrivateKey) {
	s.pub = key.Public().(ed25519.PublicKey)
	s.keyID = certs.KeyID(s.pub)
}
