package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
)

// certFixture is a signing key and certificates signed with it.
type certFixture struct {
	priv   ed25519.PrivateKey
	pub    ed25519.PublicKey
	pubkey string // as the daemon serves it

	good, failed *certs.Certificate
	goodBody     []byte
	failedBody   []byte
}

func newCertFixture(t *testing.T) *certFixture {
	t.Helper()
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	fx := &certFixture{priv: priv, pub: priv.Public().(ed25519.PublicKey)}
	fx.pubkey = certs.FormatPublicKey(fx.pub)
	fx.good, fx.goodBody = signTestCert(t, priv, "16,True,tiled", true)
	fx.failed, fx.failedBody = signTestCert(t, priv, "32,False,naive", false)
	return fx
}

func signTestCert(t *testing.T, priv ed25519.PrivateKey, key string, pass bool) (*certs.Certificate, []byte) {
	t.Helper()
	c := &certs.Certificate{
		V: 1,
		Job: certs.Job{Kernel: "sgemm", SpecHash: "h1", Problem: "256,256,256", Device: "cpu/test",
			Details: map[string]string{"goos": "linux", "cpus": "8"}},
		Key:    key,
		Config: map[string]any{"bx": 16.0, "unroll": true, "kind": "tiled"},
		Checks: []certs.Check{
			{Name: "constraints", Passed: true, Inputs: map[string]any{"constraints": []any{"bx <= 64"}}},
			{Name: "parity", Passed: pass, Inputs: map[string]any{"error_bound": 1e-4}, Results: map[string]any{"max_rel_error": 2e-6}},
		},
		Latency: certs.Latency{Samples: 5, MedianMS: 4.25, P95MS: 4.5, CILowMS: 4.2, CIHighMS: 4.3,
			TimesMS: []float64{4.2, 4.25, 4.25, 4.3, 4.5}},
		IssuedAt: fakeT0,
	}
	if err := certs.Sign(c, priv); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	body, err := c.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return c, body
}

// certReport is what Certificate.Report writes for c.
func certReport(t *testing.T, c *certs.Certificate) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Report(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// flipByte returns a copy of b with the byte at i changed to another
// character that keeps the JSON well formed.
func flipByte(b []byte, i int) []byte {
	out := bytes.Clone(b)
	switch c := out[i]; {
	case c >= '0' && c <= '8':
		out[i]++
	case c == 'a':
		out[i] = 'b'
	default:
		out[i] = 'a'
	}
	return out
}

// certDaemon is a fake quasimd that serves the certificate routes.
type certDaemon struct {
	sock string
	fx   *certFixture

	mu      sync.Mutex
	bodies  map[string][]byte // by id
	revoked map[string]string // id -> reason
	list    api.Certs
	revokes []string // "id: reason" of each revoke request
	queries []string
}

func newCertDaemon(t *testing.T) *certDaemon {
	t.Helper()
	fx := newCertFixture(t)
	d := &certDaemon{
		fx: fx,
		bodies: map[string][]byte{
			fx.good.ID:   fx.goodBody,
			fx.failed.ID: fx.failedBody,
			"tampered":   flipByte(fx.goodBody, bytes.Index(fx.goodBody, []byte(fx.good.Signature))+3),
		},
		revoked: map[string]string{fx.failed.ID: "wrong results on 512,512,512"},
		list: api.Certs{Certs: []api.CertSummary{
			{ID: fx.good.ID, Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Key: fx.good.Key, TimeMS: 4.25,
				IssuedAt: fakeT0, Issuer: "k1", Served: true},
			{ID: fx.failed.ID, Kernel: "sgemm", Problem: "256,256,256", Device: "cpu/test", Key: fx.failed.Key, TimeMS: 4.25,
				IssuedAt: fakeT0, Issuer: "k1", Revoked: true, RevokedAt: ptr(fakeT0.Add(time.Hour)), Reason: "wrong results on 512,512,512"},
			{ID: "ambiguous-1", Kernel: "k", IssuedAt: fakeT0, Issuer: "k1"},
			{ID: "ambiguous-2", Kernel: "k", IssuedAt: fakeT0, Issuer: "k1"},
		}},
	}
	d.sock = serveUnix(t, d.handler())
	return d
}

func (d *certDaemon) handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Host != api.Host {
				writeTestJSON(w, http.StatusForbidden, api.Error{Error: "bad host " + r.Host, Code: api.CodePermissionDenied})
				return
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			d.queries = append(d.queries, r.Method+" "+r.URL.RequestURI())
			h(w, r)
		})
	}
	notFound := func(w http.ResponseWriter, id string) {
		writeTestJSON(w, http.StatusNotFound, api.Error{Error: `certificate "` + id + `" not found`, Code: api.CodeNotFound})
	}
	handle(api.RouteCerts, func(w http.ResponseWriter, r *http.Request) {
		out := api.Certs{Certs: []api.CertSummary{}}
		for _, c := range d.list.Certs {
			if k := r.URL.Query().Get("kernel"); k == "" || k == c.Kernel {
				out.Certs = append(out.Certs, c)
			}
		}
		writeTestJSON(w, http.StatusOK, out)
	})
	handle(api.RouteCertPubkey, func(w http.ResponseWriter, r *http.Request) {
		writeTestJSON(w, http.StatusOK, api.Pubkey{KeyID: "k1", Pubkey: d.fx.pubkey})
	})
	handle(api.RouteCert, func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		body, ok := d.bodies[id]
		if !ok {
			notFound(w, id)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if why, ok := d.revoked[id]; ok {
			w.Header().Set(api.HeaderRevoked, why)
		}
		w.Write(body)
	})
	handle(api.RouteCertRevoke, func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var req api.RevokeRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeTestJSON(w, http.StatusBadRequest, api.Error{Error: err.Error(), Code: api.CodeInvalidArgument})
			return
		}
		switch id {
		case "locked":
			writeTestJSON(w, http.StatusForbidden, api.Error{Error: "only operators may revoke certificates", Code: api.CodePermissionDenied})
			return
		case d.fx.good.ID:
			d.revokes = append(d.revokes, id+": "+req.Reason)
			writeTestJSON(w, http.StatusOK, api.RevokeResponse{ID: id, Job: "sgemm/256,256,256/cpu/test", Requeued: true, Match: api.MatchDefault})
			return
		case d.fx.failed.ID:
			d.revokes = append(d.revokes, id+": "+req.Reason)
			writeTestJSON(w, http.StatusOK, api.RevokeResponse{ID: id, Job: "sgemm/256,256,256/cpu/test", Served: "8,True,tiled",
				Cert: "c-next", Match: api.MatchExact})
			return
		}
		notFound(w, id)
	})
	return mux
}

func (d *certDaemon) ctl(args ...string) (stdout, stderr string, code int) {
	return runCtx(context.Background(), append([]string{"--socket", d.sock}, args...)...)
}

func (d *certDaemon) lastQuery() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[len(d.queries)-1]
}

func TestCertsList(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	out, errs, code := d.ctl("certs", "list", "--kernel", "sgemm")
	if code != 0 {
		t.Fatalf("certs list = %d, want 0 (stderr %q)", code, errs)
	}
	if q := d.lastQuery(); q != "GET /v1/certs?kernel=sgemm" {
		t.Errorf("certs list sent %q", q)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("certs list printed %d lines, want 3:\n%s", len(lines), out)
	}
	at := fmtTime(fakeT0)
	good, failed := d.fx.good.ID, d.fx.failed.ID
	for i, want := range [][]string{
		{"ID", "KERNEL", "PROBLEM", "DEVICE", "KEY", "TIME_MS", "ISSUED", "SERVED", "REVOKED", "REASON"},
		{good[:16], "sgemm", "256,256,256", "cpu/test", "16,True,tiled", "4.250", at, "yes", "-", "-"},
		{failed[:16], "sgemm", "256,256,256", "cpu/test", "32,False,naive", "4.250", at, "no", fmtTime(fakeT0.Add(time.Hour)), "wrong results on 512,512,512"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("certs list line %d = %q, want fields %q", i, lines[i], want)
		}
	}

	out, errs, code = d.ctl("certs", "list", "--json")
	if code != 0 {
		t.Fatalf("certs list --json = %d, want 0 (stderr %q)", code, errs)
	}
	if got := decodeStrict[api.Certs](t, out); !reflect.DeepEqual(got, d.list) {
		t.Errorf("certs list --json = %+v, want %+v", got, d.list)
	}
	if q := d.lastQuery(); q != "GET /v1/certs" {
		t.Errorf("certs list --json sent %q", q)
	}
}

func TestCertsShow(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	fx := d.fx
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"report", []string{"certs", "show", fx.good.ID}, certReport(t, fx.good)},
		{"prefix", []string{"certs", "show", shortID(fx.good.ID)}, certReport(t, fx.good)},
		{"revoked", []string{"certs", "show", fx.failed.ID}, certReport(t, fx.failed) + "REVOKED: wrong results on 512,512,512\n"},
		{"json", []string{"certs", "show", fx.good.ID, "--json"}, string(fx.goodBody)},
		{"json first", []string{"--json", "certs", "show", shortID(fx.good.ID)}, string(fx.goodBody)},
	}
	for _, tt := range tests {
		out, errs, code := d.ctl(tt.args...)
		if code != 0 {
			t.Errorf("%s: %q = %d, want 0 (stderr %q)", tt.name, tt.args, code, errs)
			continue
		}
		if out != tt.want {
			t.Errorf("%s: %q printed\n%q\nwant\n%q", tt.name, tt.args, out, tt.want)
		}
	}

	// --json of a revoked certificate: the bytes on stdout, the revocation on stderr.
	out, errs, code := d.ctl("certs", "show", fx.failed.ID, "--json")
	if code != 0 || out != string(fx.failedBody) {
		t.Errorf("certs show revoked --json = %d, %q; want 0 and the served bytes", code, out)
	}
	mustContain(t, "stderr", errs, "certificate "+fx.failed.ID+" is revoked: wrong results on 512,512,512")

	// What show --json saved verifies offline.
	out, _, _ = d.ctl("certs", "show", fx.good.ID, "--json")
	if _, err := certs.VerifyBytes([]byte(out), fx.pub); err != nil {
		t.Errorf("VerifyBytes(certs show --json) = %v, want nil", err)
	}
}

func TestCertsVerifyOnline(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	fx := d.fx
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, ed25519.SeedSize)).Public().(ed25519.PublicKey)

	out, errs, code := d.ctl("certs", "verify", fx.good.ID)
	if code != 0 {
		t.Fatalf("certs verify = %d, want 0 (stderr %q)", code, errs)
	}
	if want := certReport(t, fx.good) + "signature OK, id OK\n"; out != want {
		t.Errorf("certs verify printed\n%s\nwant\n%s", out, want)
	}
	if out, errs, code := d.ctl("certs", "verify", shortID(fx.good.ID), "--pubkey", fx.pubkey); code != 0 || !strings.HasSuffix(out, "signature OK, id OK\n") {
		t.Errorf("certs verify PREFIX --pubkey = %d, %q (stderr %q), want 0 and OK", code, out, errs)
	}

	_, wantErr := certs.VerifyBytes(d.bodies["tampered"], fx.pub)
	if wantErr == nil {
		t.Fatal("VerifyBytes of a tampered certificate succeeded")
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string // on stderr
		out  string // on stdout
	}{
		{"tampered", []string{"tampered"}, 1, "quasimctl: verify tampered: " + wantErr.Error(), ""},
		{"wrong key", []string{fx.good.ID, "--pubkey", certs.FormatPublicKey(other)}, 1, "quasimctl: verify " + fx.good.ID + ": ", ""},
		{"revoked", []string{fx.failed.ID}, 1, "certificate " + fx.failed.ID + " is revoked: wrong results on 512,512,512",
			"signature OK, id OK\nREVOKED: wrong results on 512,512,512\n"},
		{"not found", []string{"nope"}, 4, `certificate "nope" not found`, ""},
		{"ambiguous", []string{"ambiguous-"}, 2, `certificate id "ambiguous-" is ambiguous: 2 certificates`, ""},
		{"no id", nil, 2, "verify takes ID or --file", ""},
		{"two ids", []string{"a", "b"}, 2, "verify takes ID or --file", ""},
		{"bad pubkey", []string{fx.good.ID, "--pubkey", "ed25519:!!"}, exitUsage, "parse --pubkey", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errs, code := d.ctl(append([]string{"certs", "verify"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("certs verify %q = %d, want %d (stderr %q)", tt.args, code, tt.code, errs)
			}
			mustContain(t, "stderr", errs, tt.msg)
			if tt.out == "" && strings.Contains(out, "OK") {
				t.Errorf("certs verify %q printed %q, want no OK", tt.args, out)
			}
			mustContain(t, "stdout", out, tt.out)
		})
	}
}

func TestCertsVerifyOffline(t *testing.T) {
	t.Parallel()
	fx := newCertFixture(t)
	dir := t.TempDir()
	noDaemon := tempSocket(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	certFile := write("cert.json", fx.goodBody)
	keyFile := write("key.pub", []byte(fx.pubkey+"\n"))
	keyJSON := write("key.json", []byte(`{"key_id":"k1","pubkey":"`+fx.pubkey+`"}`))
	verify := func(file, key string) (string, string, int) {
		return runCtx(context.Background(), "--socket", noDaemon, "certs", "verify", "--file", file, "--pubkey", key)
	}

	for _, key := range []string{fx.pubkey, keyFile, keyJSON} {
		out, errs, code := verify(certFile, key)
		if code != 0 {
			t.Fatalf("offline verify --pubkey %s = %d, want 0 (stderr %q)", key, code, errs)
		}
		if want := certReport(t, fx.good) + "signature OK, id OK\nrevocation not checked (offline)\n"; out != want {
			t.Errorf("offline verify printed\n%s\nwant\n%s", out, want)
		}
	}

	// From stdin.
	var stdout, stderr bytes.Buffer
	root := newRootCommand()
	root.SetArgs([]string{"--socket", noDaemon, "certs", "verify", "--file", "-", "--pubkey", fx.pubkey})
	root.SetIn(bytes.NewReader(fx.goodBody))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	if err := root.Execute(); err != nil || !strings.Contains(stdout.String(), "signature OK, id OK") {
		t.Errorf("offline verify --file - = %v, %q", err, stdout.String())
	}

	// One byte flipped anywhere that matters fails, saying what failed.
	body := fx.goodBody
	for _, tt := range []struct {
		what string
		pos  int
	}{
		{"signature", bytes.Index(body, []byte(fx.good.Signature)) + 3},
		{"kernel name", bytes.Index(body, []byte(`"sgemm"`)) + 2},
		{"config key", bytes.Index(body, []byte(`"16,True,tiled"`)) + 1},
	} {
		if tt.pos < 3 {
			t.Fatalf("no %s in %s", tt.what, body)
		}
		flipped := flipByte(body, tt.pos)
		_, wantErr := certs.VerifyBytes(flipped, fx.pub)
		if wantErr == nil {
			t.Fatalf("VerifyBytes with the %s flipped succeeded", tt.what)
		}
		file := write("flipped.json", flipped)
		out, errs, code := verify(file, keyFile)
		if code != 1 {
			t.Errorf("offline verify with the %s flipped = %d, want 1 (stderr %q)", tt.what, code, errs)
		}
		mustContain(t, "stderr", errs, "quasimctl: verify "+file+": "+wantErr.Error())
		if strings.Contains(out, "OK") {
			t.Errorf("offline verify with the %s flipped printed %q", tt.what, out)
		}
	}

	// A genuine certificate that records a failed check does not certify.
	out, errs, code := verify(write("failed.json", fx.failedBody), fx.pubkey)
	if code != 1 || !strings.Contains(out, "signature OK, id OK") {
		t.Errorf("offline verify of a failed certificate = %d, %q; want 1 after the report", code, out)
	}
	mustContain(t, "stderr", errs, "certificate "+fx.failed.ID+" records a failed check")

	for _, tt := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no pubkey", []string{"--file", certFile}, 2, "verify --file needs --pubkey"},
		{"id and file", []string{"x", "--file", certFile, "--pubkey", fx.pubkey}, 2, "not both"},
		{"missing file", []string{"--file", filepath.Join(dir, "none.json"), "--pubkey", fx.pubkey}, exitUsage, "no such file"},
		{"missing key file", []string{"--file", certFile, "--pubkey", filepath.Join(dir, "none.pub")}, exitUsage, "read --pubkey"},
		{"garbage key file", []string{"--file", certFile, "--pubkey", certFile}, exitUsage, "parse --pubkey " + certFile},
	} {
		_, errs, code := runCtx(context.Background(), append([]string{"--socket", noDaemon, "certs", "verify"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%s: certs verify %q = %d, want %d (stderr %q)", tt.name, tt.args, code, tt.code, errs)
		}
		mustContain(t, tt.name+" stderr", errs, tt.msg)
	}
}

func TestCertsRevoke(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	fx := d.fx
	out, errs, code := d.ctl("certs", "revoke", shortID(fx.good.ID), "--reason", "wrong on driver 550")
	if code != 0 {
		t.Fatalf("certs revoke = %d, want 0 (stderr %q)", code, errs)
	}
	want := "revoked " + fx.good.ID + "\nsgemm/256,256,256/cpu/test now serves the default config\nre-verification queued\n"
	if out != want {
		t.Errorf("certs revoke printed\n%s\nwant\n%s", out, want)
	}
	out, _, code = d.ctl("certs", "revoke", fx.failed.ID, "--reason", "x")
	if want := "revoked " + fx.failed.ID + "\nsgemm/256,256,256/cpu/test now serves 8,True,tiled (certificate c-next)\n"; code != 0 || out != want {
		t.Errorf("certs revoke = %d,\n%s\nwant 0,\n%s", code, out, want)
	}
	out, _, code = d.ctl("certs", "revoke", fx.failed.ID, "--reason", "y", "--json")
	if got := decodeStrict[api.RevokeResponse](t, out); code != 0 || got.Served != "8,True,tiled" || got.Cert != "c-next" {
		t.Errorf("certs revoke --json = %d, %+v", code, got)
	}
	d.mu.Lock()
	wantRevokes := []string{fx.good.ID + ": wrong on driver 550", fx.failed.ID + ": x", fx.failed.ID + ": y"}
	if !reflect.DeepEqual(d.revokes, wantRevokes) {
		t.Errorf("daemon got revocations %q, want %q", d.revokes, wantRevokes)
	}
	d.mu.Unlock()

	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no reason", []string{fx.good.ID}, 2, "--reason is required"},
		{"blank reason", []string{fx.good.ID, "--reason", "  "}, 2, "--reason is required"},
		{"no id", []string{"--reason", "x"}, 2, "revoke takes ID"},
		{"not found", []string{"nope", "--reason", "x"}, 4, `certificate "nope" not found`},
		{"permission denied", []string{"locked", "--reason", "x"}, 5, "only operators may revoke certificates"},
		{"ambiguous", []string{"ambig", "--reason", "x"}, 2, "is ambiguous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { // not parallel: the count below needs them done
			_, errs, code := d.ctl(append([]string{"certs", "revoke"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("certs revoke %q = %d, want %d (stderr %q)", tt.args, code, tt.code, errs)
			}
			mustContain(t, "stderr", errs, tt.msg)
		})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.revokes) != len(wantRevokes) {
		t.Errorf("failed revokes reached the daemon: %q", d.revokes[len(wantRevokes):])
	}
}

func TestCertsPubkey(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	out, errs, code := d.ctl("certs", "pubkey")
	if code != 0 {
		t.Fatalf("certs pubkey = %d, want 0 (stderr %q)", code, errs)
	}
	if out != d.fx.pubkey+"\n" {
		t.Errorf("certs pubkey = %q, want %q", out, d.fx.pubkey+"\n")
	}
	pub, err := certs.ParsePublicKey(strings.TrimSuffix(out, "\n"))
	if err != nil || !pub.Equal(d.fx.pub) {
		t.Errorf("ParsePublicKey(certs pubkey) = %x, %v; want %x", pub, err, d.fx.pub)
	}
	// The file certs pubkey writes is what verify --pubkey reads.
	keyFile := filepath.Join(t.TempDir(), "key.pub")
	if err := os.WriteFile(keyFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := loadPubkey(keyFile); err != nil || !got.Equal(d.fx.pub) {
		t.Errorf("loadPubkey(certs pubkey output) = %x, %v; want %x", got, err, d.fx.pub)
	}

	out, _, code = d.ctl("certs", "pubkey", "--json")
	if got := decodeStrict[api.Pubkey](t, out); code != 0 || got != (api.Pubkey{KeyID: "k1", Pubkey: d.fx.pubkey}) {
		t.Errorf("certs pubkey --json = %d, %+v", code, got)
	}
}

func TestCertsExitCodes(t *testing.T) {
	t.Parallel()
	d := newCertDaemon(t)
	missing := tempSocket(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"help", []string{"--socket", d.sock, "certs"}, 0, ""},
		{"unknown subcommand", []string{"--socket", d.sock, "certs", "bogus"}, 2, `unknown command "bogus" for "quasimctl certs"`},
		{"show not found", []string{"--socket", d.sock, "certs", "show", "nope"}, 4, `certificate "nope" not found`},
		{"show reserved id", []string{"--socket", d.sock, "certs", "show", "pubkey"}, 2, "reserved"}, // a bad argument
		{"show no daemon", []string{"--socket", missing, "certs", "show", "x"}, 3, "is quasimd running?"},
		{"list no daemon", []string{"--socket", missing, "certs", "list"}, 3, "cannot reach quasimd"},
		{"verify no daemon", []string{"--socket", missing, "certs", "verify", "x"}, 3, "cannot reach quasimd"},
		{"pubkey no daemon", []string{"--socket", missing, "certs", "pubkey"}, 3, "cannot reach quasimd"},
		{"list with args", []string{"--socket", d.sock, "certs", "list", "x"}, 2, "list takes no arguments"},
		{"show without id", []string{"--socket", d.sock, "certs", "show"}, 2, "show takes ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs, code := runCtx(context.Background(), tt.args...)
			if code != tt.code {
				t.Errorf("Main(%q) = %d, want %d (stderr %q)", tt.args, code, tt.code, errs)
			}
			mustContain(t, "stderr", errs, tt.msg)
		})
	}
}
