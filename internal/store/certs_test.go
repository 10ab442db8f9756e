package store_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// cert returns the metadata of a certificate of config key, as PutCert
// takes it; Job is filled as Cert gives it back.
func cert(id string, job store.JobKey, key string, ms float64, issued int) store.CertMeta {
	return store.CertMeta{ID: id, Job: job, Key: key, TimeMS: ms, IssuedAt: at(issued)}
}

// checkCert fails t unless Cert(id) gives body and want.
func checkCert(t *testing.T, s *store.Store, id string, body []byte, want store.CertMeta) {
	t.Helper()
	gotBody, got, err := s.Cert(id)
	if err != nil || string(gotBody) != string(body) || !reflect.DeepEqual(got, want) {
		t.Errorf("Cert(%q) = %q, %+v, %v; want %q, %+v", id, gotBody, got, err, body, want)
	}
}

func TestCertRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		meta store.CertMeta // as given to PutCert
		body []byte
		want store.CertMeta // as Cert gives it back
	}{
		{
			name: "json body",
			meta: cert("c1", jobA, "8,8,2", 1.25, 3),
			body: []byte("{\n  \"id\": \"c1\", \"html\": \"<a>&</a>\", \"sig\": \"AAE=\"\n}\n"),
			want: cert("c1", jobA, "8,8,2", 1.25, 3),
		},
		{
			name: "binary body",
			meta: cert("sha256:00ff", jobB, "1", 0, 0),
			body: []byte{0, 0xff, '"', '\\', 0x80, 0},
			want: cert("sha256:00ff", jobB, "1", 0, 0),
		},
		{
			name: "one byte, long id",
			meta: cert(strings.Repeat("x", 4096), jobC, "k", 1e9, 1),
			body: []byte{'.'},
			want: cert(strings.Repeat("x", 4096), jobC, "k", 1e9, 1),
		},
		{
			name: "job and revocation of meta ignored",
			meta: store.CertMeta{ID: "c2", Job: jobB, Key: "k", TimeMS: 2, IssuedAt: at(4), Revoked: true, RevokedAt: at(5), Reason: "r"},
			body: []byte("signed"),
			want: cert("c2", jobA, "k", 2, 4),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			body := append([]byte{}, tt.body...)
			must(t, s.PutCert(tt.want.Job, tt.meta, body))
			body[0]++ // the caller's slice is not kept
			checkCert(t, s, tt.meta.ID, tt.body, tt.want)
			got, _, _ := s.Cert(tt.meta.ID)
			got[0]++ // nor is the one returned
			checkCert(t, s, tt.meta.ID, tt.body, tt.want)
			if got, err := s.JobCerts(tt.want.Job); err != nil || !reflect.DeepEqual(got, []store.CertMeta{tt.want}) {
				t.Errorf("JobCerts = %+v, %v, want [%+v]", got, err, tt.want)
			}
			if got, err := s.Certs(); err != nil || !reflect.DeepEqual(got, []store.CertMeta{tt.want}) {
				t.Errorf("Certs = %+v, %v, want [%+v]", got, err, tt.want)
			}
			// A job with only a certificate is a job.
			if got, err := s.Jobs(); err != nil || !reflect.DeepEqual(got, []store.JobKey{tt.want.Job}) {
				t.Errorf("Jobs = %v, %v, want [%v]", got, err, tt.want.Job)
			}
		})
	}
}

func TestPutCertAgain(t *testing.T) {
	t.Parallel()
	first := cert("c1", jobA, "8,8", 1.5, 1)
	body := []byte(`{"id":"c1","sig":"AAE="}`)
	tests := []struct {
		name    string
		job     store.JobKey
		meta    store.CertMeta
		body    []byte
		wantErr error
	}{
		{name: "same bytes", job: jobA, meta: first, body: body},
		{name: "same bytes, other metadata", job: jobA, meta: cert("c1", jobA, "other", 9, 9), body: body},
		{name: "other bytes", job: jobA, meta: first, body: []byte(`{"id":"c1","sig":"AAF="}`), wantErr: store.ErrInvalid},
		{name: "longer bytes", job: jobA, meta: first, body: append(append([]byte{}, body...), ' '), wantErr: store.ErrInvalid},
		{name: "same bytes, other job", job: jobB, meta: first, body: body, wantErr: store.ErrInvalid},
		{name: "empty id", job: jobA, meta: cert("", jobA, "8,8", 1, 1), body: body, wantErr: store.ErrInvalid},
		{name: "id too long", job: jobA, meta: cert(strings.Repeat("x", 32769), jobA, "8,8", 1, 1), body: body, wantErr: store.ErrInvalid},
		{name: "empty body", job: jobB, meta: cert("c2", jobB, "8,8", 1, 1), body: []byte{}, wantErr: store.ErrInvalid},
		{name: "nil body", job: jobB, meta: cert("c2", jobB, "8,8", 1, 1), wantErr: store.ErrInvalid},
		{name: "bad job", job: store.JobKey{Kernel: "a|b"}, meta: cert("c2", jobB, "8,8", 1, 1), body: body, wantErr: store.ErrInvalid},
		{name: "time not json", job: jobB, meta: cert("c2", jobB, "8,8", math.NaN(), 1), body: body, wantErr: store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			must(t, s.PutCert(jobA, first, body))
			err := s.PutCert(tt.job, tt.meta, tt.body)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("PutCert = %v, want %v", err, tt.wantErr)
			}
			// Whatever the second put, the first certificate stands alone.
			checkCert(t, s, "c1", body, first)
			if got, err := s.Certs(); err != nil || !reflect.DeepEqual(got, []store.CertMeta{first}) {
				t.Errorf("Certs = %+v, %v, want [%+v]", got, err, first)
			}
			if got, err := s.JobCerts(jobB); err != nil || got == nil || len(got) != 0 {
				t.Errorf("JobCerts(jobB) = %+v, %v, want empty", got, err)
			}
			if got, err := s.Jobs(); err != nil || !reflect.DeepEqual(got, []store.JobKey{jobA}) {
				t.Errorf("Jobs = %v, %v, want [%v]", got, err, jobA)
			}
		})
	}
}

func TestCertsOrder(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	metas := []store.CertMeta{
		0: cert("e", jobA, "1", 3.0, 10),
		1: cert("d", jobA, "2", 1.0, 30),
		2: cert("c", jobB, "1", 0.5, 20),
		3: cert("b", jobA, "3", 2.0, 30),
		4: cert("a", jobA, "4", 3.0, 5),
		5: cert("f", jobC, "1", 9.0, 40),
	}
	for _, m := range metas {
		must(t, s.PutCert(m.Job, m, []byte("body of "+m.ID)))
	}
	tests := []struct {
		name string
		list func() ([]store.CertMeta, error)
		want []int // indexes into metas
	}{
		// Newest first; equal times in id order.
		{"Certs", s.Certs, []int{5, 3, 1, 2, 0, 4}},
		// Fastest first; equal times in id order.
		{"JobCerts(jobA)", func() ([]store.CertMeta, error) { return s.JobCerts(jobA) }, []int{1, 3, 4, 0}},
		{"JobCerts(jobB)", func() ([]store.CertMeta, error) { return s.JobCerts(jobB) }, []int{2}},
		{"JobCerts(no certificates)", func() ([]store.CertMeta, error) { return s.JobCerts(store.JobKey{Kernel: "none"}) }, []int{}},
	}
	for _, tt := range tests {
		want := []store.CertMeta{}
		for _, i := range tt.want {
			want = append(want, metas[i])
		}
		if got, err := tt.list(); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, %v, want %+v", tt.name, got, err, want)
		}
	}
	for _, id := range []string{"g", "", "A", "body of a"} {
		if _, _, err := s.Cert(id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Cert(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	c1, c2, c3 := cert("c1", jobA, "1", 1, 1), cert("c2", jobA, "2", 2, 2), cert("c3", jobB, "1", 1, 3)
	for _, m := range []store.CertMeta{c1, c2, c3} {
		must(t, s.PutCert(m.Job, m, []byte(m.ID)))
	}
	revoked := c1
	revoked.Revoked, revoked.RevokedAt, revoked.Reason = true, at(101), "wrong result on driver 551"
	tests := []struct {
		name    string
		id      string
		reason  string
		want    store.CertMeta
		wantErr error
	}{
		{name: "empty reason", id: "c1", wantErr: store.ErrInvalid},
		{name: "first", id: "c1", reason: revoked.Reason, want: revoked},
		{name: "twice keeps the first", id: "c1", reason: "another reason", want: revoked},
		{name: "twice, empty reason", id: "c1", wantErr: store.ErrInvalid},
		{name: "unknown id", id: "c9", reason: "r", wantErr: store.ErrNotFound},
		{name: "empty id", id: "", reason: "r", wantErr: store.ErrNotFound},
	}
	for i, tt := range tests { // in order: each builds on the one before
		got, err := s.Revoke(tt.id, tt.reason, at(100+i))
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Revoke(%q, %q) = %+v, %v, want %+v, %v", tt.name, tt.id, tt.reason, got, err, tt.want, tt.wantErr)
		}
	}
	// The revocation shows everywhere; the other certificates stay live.
	checkCert(t, s, "c1", []byte("c1"), revoked)
	checkCert(t, s, "c2", []byte("c2"), c2)
	if got, err := s.JobCerts(jobA); err != nil || !reflect.DeepEqual(got, []store.CertMeta{revoked, c2}) {
		t.Errorf("JobCerts = %+v, %v, want [%+v %+v]", got, err, revoked, c2)
	}
	if got, err := s.Certs(); err != nil || !reflect.DeepEqual(got, []store.CertMeta{c3, c2, revoked}) {
		t.Errorf("Certs = %+v, %v, want [%+v %+v %+v]", got, err, c3, c2, revoked)
	}
	// A revoked id still holds its bytes: storing them again is a no-op,
	// storing others is refused, and neither undoes the revocation.
	must(t, s.PutCert(jobA, c1, []byte("c1")))
	if err := s.PutCert(jobA, c1, []byte("new")); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("PutCert(revoked id, other bytes) = %v, want ErrInvalid", err)
	}
	checkCert(t, s, "c1", []byte("c1"), revoked)
}

// Revoking the certificate of a point on a job's front takes the point off
// the served record's front in the same transaction.
func TestRevokeDropsFrontPoint(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	c1, c2, c3 := cert("c1", jobA, "1", 1, 1), cert("c2", jobA, "2", 2, 2), cert("c3", jobA, "3", 3, 3)
	for _, m := range []store.CertMeta{c1, c2, c3} {
		must(t, s.PutCert(m.Job, m, []byte(m.ID)))
	}
	front := []store.FrontPoint{{Key: "1", TimeMS: 1, EnergyMJ: 9, Certificate: "c1"}, {Key: "2", TimeMS: 2, EnergyMJ: 5, Certificate: "c2"}, {Key: "3", TimeMS: 3, EnergyMJ: 4, Certificate: "c3"}}
	must(t, s.PutServed(jobA, store.Served{Key: "1", TimeMS: 1, Certificate: "c1", Front: front}))
	if _, err := s.Revoke("c2", "wrong on driver 551", at(5)); err != nil {
		t.Fatal(err)
	}
	sv, ok, err := s.Served(jobA)
	if err != nil || !ok || sv.Certificate != "c1" || !reflect.DeepEqual(sv.Front, []store.FrontPoint{front[0], front[2]}) {
		t.Errorf("served after revoking c2 = %+v, %v, %v; want c1 with the front less c2", sv, ok, err)
	}
	// The served config's own certificate: the front loses it too, the
	// record stays for the caller to replace.
	if _, err := s.Revoke("c1", "wrong", at(6)); err != nil {
		t.Fatal(err)
	}
	if sv, _, _ := s.Served(jobA); sv.Certificate != "c1" || !reflect.DeepEqual(sv.Front, []store.FrontPoint{front[2]}) {
		t.Errorf("served after revoking c1 = %+v", sv)
	}
}

func TestMarkTrial(t *testing.T) {
	t.Parallel()
	base := []store.Trial{trial("a", 1), {Key: "b", Status: "compile", Error: "nvcc: bad tile", At: at(2)}, trial("c", 3)}
	wrong := base[2]
	wrong.Status, wrong.Error = "wrong_result", "max abs error 0.5 > 1e-3"
	tests := []struct {
		name         string
		job          store.JobKey
		key          string
		status, text string
		wantErr      error
		want         []store.Trial // the trials of jobA after
	}{
		{
			name: "wrong result", job: jobA, key: "c", status: "wrong_result", text: "max abs error 0.5 > 1e-3",
			want: []store.Trial{base[0], base[1], wrong},
		},
		{
			name: "empty text clears the error", job: jobA, key: "b", status: "ok",
			want: []store.Trial{base[0], {Key: "b", Status: "ok", At: at(2)}, base[2]},
		},
		{name: "unknown key", job: jobA, key: "d", status: "wrong_result", wantErr: store.ErrNotFound, want: base},
		{name: "empty key", job: jobA, key: "", status: "wrong_result", wantErr: store.ErrNotFound, want: base},
		{name: "job without trials", job: jobB, key: "a", status: "wrong_result", wantErr: store.ErrNotFound, want: base},
		{name: "empty status", job: jobA, key: "a", wantErr: store.ErrInvalid, want: base},
		{name: "bad job", job: store.JobKey{}, key: "a", status: "wrong_result", wantErr: store.ErrInvalid, want: base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			if _, err := s.AddTrials(jobA, base); err != nil {
				t.Fatal(err)
			}
			must(t, s.PutServed(jobB, store.Served{Key: "a"})) // jobB exists, without trials
			err := s.MarkTrial(tt.job, tt.key, tt.status, tt.text)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("MarkTrial = %v, want %v", err, tt.wantErr)
			}
			if got, err := s.Trials(jobA); err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Trials = %+v, %v, want %+v", got, err, tt.want)
			}
			if got, err := s.Trials(jobB); err != nil || len(got) != 0 {
				t.Errorf("Trials(jobB) = %+v, %v, want none", got, err)
			}
			// A marked trial is still measured: adding its key again is skipped.
			if n, err := s.AddTrials(jobA, []store.Trial{trial("c", 0)}); err != nil || n != 0 {
				t.Errorf("AddTrials(c again) = %d, %v, want 0", n, err)
			}
		})
	}
}

func TestClearServed(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	must(t, s.ClearServed(jobA)) // none: no error, and no job registered
	if jobs, err := s.Jobs(); err != nil || len(jobs) != 0 {
		t.Errorf("Jobs = %v, %v, want none", jobs, err)
	}
	svA, svB := store.Served{Key: "a", TimeMS: 1, Cycle: 1, PromotedAt: at(1), Certificate: "c1"}, store.Served{Key: "b"}
	must(t, s.PutServed(jobA, svA))
	must(t, s.PutServed(jobB, svB))
	for range 2 {
		must(t, s.ClearServed(jobA))
		if got, ok, err := s.Served(jobA); err != nil || ok || !reflect.DeepEqual(got, store.Served{}) {
			t.Errorf("Served after ClearServed = %+v, %v, %v, want none", got, ok, err)
		}
	}
	if got, ok, err := s.Served(jobB); err != nil || !ok || !reflect.DeepEqual(got, svB) {
		t.Errorf("Served(other job) = %+v, %v, %v, want %+v", got, ok, err, svB)
	}
	if jobs, err := s.Jobs(); err != nil || !reflect.DeepEqual(jobs, []store.JobKey{jobB, jobA}) {
		t.Errorf("Jobs = %v, %v, want both still registered", jobs, err)
	}
	must(t, s.PutServed(jobA, svA)) // served again
	if got, ok, err := s.Served(jobA); err != nil || !ok || !reflect.DeepEqual(got, svA) {
		t.Errorf("Served after a new PutServed = %+v, %v, %v, want %+v", got, ok, err, svA)
	}
}

func TestPromote(t *testing.T) {
	t.Parallel()
	// Every case starts with jobA serving "k0" under c0, c1 stored and
	// revoked, cB stored for jobB.
	c0, c1, cB, cNew := cert("c0", jobA, "k0", 2, 1), cert("c1", jobA, "k1", 1, 2), cert("cB", jobB, "k", 1, 3), cert("new", jobA, "k2", 0.5, 4)
	sv0 := store.Served{Key: "k0", TimeMS: 2, Cycle: 1, PromotedAt: at(1), Certificate: "c0"}
	svNew := store.Served{Key: "k2", TimeMS: 0.6, Cycle: 2, PromotedAt: at(5), Certificate: "new"}
	tests := []struct {
		name     string
		job      store.JobKey
		sv       store.Served
		meta     store.CertMeta
		body     string
		wantErr  error
		wantSv   store.Served // jobA's served after
		wantCert bool         // whether "new" is stored after
	}{
		{name: "new certificate", job: jobA, sv: svNew, meta: cNew, body: "new", wantSv: svNew, wantCert: true},
		{
			name: "certificate id filled", job: jobA, sv: store.Served{Key: "k2", TimeMS: 0.6}, meta: cNew, body: "new",
			wantSv: store.Served{Key: "k2", TimeMS: 0.6, Certificate: "new"}, wantCert: true,
		},
		{
			name: "stored certificate again", job: jobA, sv: store.Served{Key: "k0", TimeMS: 2.1, Cycle: 3, Certificate: "c0"}, meta: c0, body: "c0",
			wantSv: store.Served{Key: "k0", TimeMS: 2.1, Cycle: 3, Certificate: "c0"},
		},
		{name: "conflicting certificate", job: jobA, sv: store.Served{Key: "k0", Certificate: "c0"}, meta: c0, body: "forged", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "certificate of another job", job: jobA, sv: store.Served{Key: "k", Certificate: "cB"}, meta: cB, body: "cB", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "revoked certificate", job: jobA, sv: store.Served{Key: "k1", Certificate: "c1"}, meta: c1, body: "c1", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "served names another certificate", job: jobA, sv: store.Served{Key: "k2", Certificate: "c0"}, meta: cNew, body: "new", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "served another config", job: jobA, sv: store.Served{Key: "k0", Certificate: "new"}, meta: cNew, body: "new", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "served not json", job: jobA, sv: store.Served{Key: "k2", TimeMS: math.Inf(1)}, meta: cNew, body: "new", wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "empty body", job: jobA, sv: svNew, meta: cNew, wantErr: store.ErrInvalid, wantSv: sv0},
		{name: "bad job", job: store.JobKey{Kernel: "x|y"}, sv: svNew, meta: cNew, body: "new", wantErr: store.ErrInvalid, wantSv: sv0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			for _, m := range []store.CertMeta{c0, c1, cB} {
				must(t, s.PutCert(m.Job, m, []byte(m.ID)))
			}
			must(t, s.PutServed(jobA, sv0))
			if _, err := s.Revoke("c1", "bad", at(3)); err != nil {
				t.Fatal(err)
			}
			err := s.Promote(tt.job, tt.sv, tt.meta, []byte(tt.body))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Promote = %v, want %v", err, tt.wantErr)
			}
			if got, ok, err := s.Served(jobA); err != nil || !ok || !reflect.DeepEqual(got, tt.wantSv) {
				t.Errorf("Served = %+v, %v, %v, want %+v", got, ok, err, tt.wantSv)
			}
			if _, ok, err := s.Served(jobB); err != nil || ok {
				t.Errorf("Served(jobB): ok = %v, %v, want none", ok, err)
			}
			_, _, err = s.Cert("new")
			if tt.wantCert != (err == nil) {
				t.Errorf("Cert(new) = %v, want stored: %v", err, tt.wantCert)
			}
			checkCert(t, s, "c0", []byte("c0"), c0)
			wantIDs := []string{"c1", "c0"}
			if tt.wantCert {
				wantIDs = []string{"new", "c1", "c0"}
			}
			got, err := s.JobCerts(jobA)
			var ids []string
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			if err != nil || !reflect.DeepEqual(ids, wantIDs) {
				t.Errorf("JobCerts(jobA) ids = %q, %v, want %q", ids, err, wantIDs)
			}
		})
	}
}

func TestConcurrentPromote(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	meta := cert("c1", jobA, "k", 1, 1)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := s.Promote(jobA, store.Served{Key: "k", Cycle: i}, meta, []byte("signed")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, err := s.JobCerts(jobA); err != nil || !reflect.DeepEqual(got, []store.CertMeta{meta}) {
		t.Errorf("JobCerts = %+v, %v, want [%+v]", got, err, meta)
	}
	if sv, ok, err := s.Served(jobA); err != nil || !ok || sv.Certificate != "c1" {
		t.Errorf("Served = %+v, %v, %v, want certificate c1", sv, ok, err)
	}
}

// A served record naming a revoked certificate, for its config or for a
// point of its front, is refused and the stored one kept.
func TestPutServedRefusesRevoked(t *testing.T) {
	s := storetest.New(t)
	for _, id := range []string{"c1", "c2"} {
		if err := s.PutCert(jobA, cert(id, jobA, "k"+id, 1, 1), []byte("body "+id)); err != nil {
			t.Fatal(err)
		}
	}
	sv := store.Served{Key: "kc1", TimeMS: 1, Certificate: "c1", Front: []store.FrontPoint{
		{Key: "kc1", TimeMS: 1, EnergyMJ: 10, Certificate: "c1"}, {Key: "kc2", TimeMS: 2, EnergyMJ: 5, Certificate: "c2"},
	}}
	if err := s.PutServed(jobA, sv); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke("c2", "bad", time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutServed(jobA, sv); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("served with a revoked front certificate: %v, want ErrInvalid", err)
	}
	// The one stored is kept, less the revoked point Revoke took off.
	want := sv
	want.Front = sv.Front[:1]
	if got, ok, err := s.Served(jobA); err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored served %+v, %v, %v; want %+v", got, ok, err, want)
	}
}
