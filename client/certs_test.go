package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

var (
	certsV = api.Certs{Certs: []api.CertSummary{
		{ID: "c1", Kernel: "sgemm", Problem: "8,8", Device: "cpu/x", Key: "1,x", TimeMS: 1.5, IssuedAt: t0, Issuer: "k1", Served: true},
		{ID: "c0", Kernel: "sgemm", Problem: "8,8", Device: "cpu/x", Key: "2,y", TimeMS: 2, IssuedAt: t0, Issuer: "k1",
			Revoked: true, RevokedAt: &t0, Reason: "wrong"},
	}}
	pubkeyV = api.Pubkey{KeyID: "k1", Pubkey: "ed25519:AAAA"}
	revokeV = api.RevokeResponse{ID: "c1", Job: "sgemm/8,8/cpu/x", Served: "2,y", Cert: "c2", Requeued: true, Match: api.MatchExact}
	// certBody is deliberately not what encoding/json would write: the
	// client must hand back the served bytes untouched.
	certBody = []byte("{\"v\":1,  \"id\":\"c1\",\n\"signature\":\"\u00e9\\u0041\"}\n\n")
)

// certDaemon serves the certificate routes from canned values.
type certDaemon struct {
	mu   sync.Mutex
	reqs []request
}

func (f *certDaemon) last() request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[len(f.reqs)-1]
}

func (f *certDaemon) handler() http.Handler {
	mux := http.NewServeMux()
	record := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, request{Method: r.Method, Path: r.URL.EscapedPath(), Kernel: r.PathValue("id"), Host: r.Host, Query: r.URL.RawQuery, Body: b})
		f.mu.Unlock()
	}
	notFound := func(w http.ResponseWriter, id string) {
		writeJSON(w, http.StatusNotFound, api.Error{Error: `certificate "` + id + `" not found`, Code: api.CodeNotFound})
	}
	mux.HandleFunc(api.RouteCerts, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		writeJSON(w, http.StatusOK, certsV)
	})
	mux.HandleFunc(api.RouteCertPubkey, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		writeJSON(w, http.StatusOK, pubkeyV)
	})
	mux.HandleFunc(api.RouteCert, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch id := r.PathValue("id"); id {
		case "c1", "a/b c":
		case "c0":
			w.Header().Set(api.HeaderRevoked, "wrong result on 7,7")
		case "blank":
			w.Header()[api.HeaderRevoked] = []string{""}
		default:
			notFound(w, id)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(certBody)
	})
	mux.HandleFunc(api.RouteCertRevoke, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		if id := r.PathValue("id"); id != "c1" {
			notFound(w, id)
			return
		}
		writeJSON(w, http.StatusOK, revokeV)
	})
	return mux
}

func newCertClient(t *testing.T) (*client.Client, *certDaemon) {
	t.Helper()
	f := &certDaemon{}
	return &client.Client{Socket: serve(t, f.handler())}, f
}

func TestCertMethods(t *testing.T) {
	t.Parallel()
	c, f := newCertClient(t)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() (any, error)
		want any
		req  request // Kernel holds the id the route saw
	}{
		{"Certs", func() (any, error) { return c.Certs(ctx, "") }, certsV, request{Method: "GET", Path: "/v1/certs"}},
		{"CertsKernel", func() (any, error) { return c.Certs(ctx, "s gemm") }, certsV,
			request{Method: "GET", Path: "/v1/certs", Query: "kernel=s+gemm"}},
		{"Pubkey", func() (any, error) { return c.Pubkey(ctx) }, pubkeyV, request{Method: "GET", Path: "/v1/certs/pubkey"}},
		{"Revoke", func() (any, error) { return c.Revoke(ctx, "c1", "wrong result") }, revokeV,
			request{Method: "POST", Path: "/v1/certs/c1/revoke", Kernel: "c1", Body: []byte(`{"reason":"wrong result"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %+v, want %+v", tt.name, got, tt.want)
			}
			r := f.last()
			if r.Host != api.Host {
				t.Errorf("%s: Host = %q, want %q", tt.name, r.Host, api.Host)
			}
			if tt.req.Body != nil && !jsonEqual(r.Body, tt.req.Body) {
				t.Errorf("%s: body = %s, want %s", tt.name, r.Body, tt.req.Body)
			}
			r.Host, r.Body, tt.req.Body = "", nil, nil
			if !reflect.DeepEqual(r, tt.req) {
				t.Errorf("%s: request = %+v, want %+v", tt.name, r, tt.req)
			}
		})
	}
}

func TestCert(t *testing.T) {
	t.Parallel()
	c, f := newCertClient(t)
	tests := []struct {
		id, path, revoked string
	}{
		{"c1", "/v1/certs/c1", ""},
		{"c0", "/v1/certs/c0", "wrong result on 7,7"},
		{"blank", "/v1/certs/blank", "no reason given"},
		{"a/b c", "/v1/certs/a%2Fb%20c", ""},
	}
	for _, tt := range tests {
		body, revoked, err := c.Cert(context.Background(), tt.id)
		if err != nil {
			t.Fatalf("Cert(%q): %v", tt.id, err)
		}
		if !bytes.Equal(body, certBody) {
			t.Errorf("Cert(%q) body = %q, want the served bytes %q", tt.id, body, certBody)
		}
		if revoked != tt.revoked {
			t.Errorf("Cert(%q) revoked = %q, want %q", tt.id, revoked, tt.revoked)
		}
		if r := f.last(); r.Path != tt.path || r.Kernel != tt.id {
			t.Errorf("Cert(%q) asked for %s (id %q), want %s", tt.id, r.Path, r.Kernel, tt.path)
		}
	}
}

func TestCertErrors(t *testing.T) {
	t.Parallel()
	c, f := newCertClient(t)
	ctx := context.Background()

	body, revoked, err := c.Cert(ctx, "nope")
	if !errors.Is(err, api.ErrNotFound) || err.Error() != `certificate "nope" not found` || body != nil || revoked != "" {
		t.Errorf("Cert(nope) = %q, %q, %v; want nil, \"\", ErrNotFound", body, revoked, err)
	}
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
		t.Errorf("Cert(nope) error = %#v, want *client.Error with status 404", err)
	}
	if _, err := c.Revoke(ctx, "nope", "x"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Revoke(nope) error = %v, want %v", err, api.ErrNotFound)
	}

	// Ids that cannot name a certificate fail before any request.
	f.mu.Lock()
	n := len(f.reqs)
	f.mu.Unlock()
	for _, id := range []string{"", "pubkey", ".", ".."} {
		if _, _, err := c.Cert(ctx, id); !errors.Is(err, api.ErrInvalidArgument) {
			t.Errorf("Cert(%q) error = %v, want %v", id, err, api.ErrInvalidArgument)
		}
		if _, err := c.Revoke(ctx, id, "x"); !errors.Is(err, api.ErrInvalidArgument) {
			t.Errorf("Revoke(%q) error = %v, want %v", id, err, api.ErrInvalidArgument)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != n {
		t.Errorf("invalid ids sent %d requests, want none", len(f.reqs)-n)
	}
}

func TestCertUnavailable(t *testing.T) {
	t.Parallel()
	c := &client.Client{Socket: socketPath(t)}
	if _, _, err := c.Cert(context.Background(), "c1"); !errors.Is(err, api.ErrUnavailable) {
		t.Errorf("Cert() without a daemon error = %v, want %v", err, api.ErrUnavailable)
	}
}

// The revoke body is exactly an api.RevokeRequest.
func TestRevokeBody(t *testing.T) {
	t.Parallel()
	c, f := newCertClient(t)
	if _, err := c.Revoke(context.Background(), "c1", `quote " and ünïcode`); err != nil {
		t.Fatal(err)
	}
	var got api.RevokeRequest
	dec := json.NewDecoder(bytes.NewReader(f.last().Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || got.Reason != `quote " and ünïcode` {
		t.Errorf("revoke body = %+v (%v), want reason %q", got, err, `quote " and ünïcode`)
	}
}
