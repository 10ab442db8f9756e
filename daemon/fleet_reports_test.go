package daemon

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/fleet/fleettest"
)

// fleetReporter is another node of fleet name on cl, signing with key.
func fleetReporter(t *testing.T, ctx context.Context, cl *fleettest.Cluster, name string, key ed25519.PrivateKey) *fleet.Client {
	t.Helper()
	c, err := fleet.New(fleet.Config{URLs: cl.URLs(), Name: name, Key: key, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx)
	select {
	case <-c.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("reporter not joined in 30s")
	}
	return c
}

// False failure reports from one fleet node revoke nothing: this node
// records them and re-verifies once, which passes. Once its own device
// computes wrong, the node's next report revokes the certificate, and
// the revocation is published. A real embedded NATS server.
func TestFleetFailureReportsNeedEvidence(t *testing.T) {
	cl := fleettest.Start(t, 1)
	pub2, key2, _ := ed25519.GenerateKey(nil)
	trust := t.TempDir()
	if err := os.WriteFile(filepath.Join(trust, "b.pub"), []byte(certs.FormatPublicKey(pub2)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fn *fleetNode
	ts, _, served, wrong := evidenceServer(t, func(ts *testServer, key ed25519.PrivateKey) {
		var err error
		if fn, err = newFleetNode(FleetConfig{URLs: cl.URLs(), Name: "etest", TrustDir: trust}, key, ts.sched, ts.st, zerolog.Nop()); err != nil {
			t.Fatal(err)
		}
		ts.srv.fleet = fn
		ts.sched.onChange = fn.localChanged
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { fn.run(ctx, ts.srv); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-fn.cl.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("node not joined in 30s")
	}
	ts.srv.setRecheck(time.Hour)
	other := fleetReporter(t, ctx, cl, "etest", key2)
	reporter := "node:" + certs.KeyID(pub2)
	reported := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			reps, err := ts.st.Reports(served.Certificate)
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) == 1 && reps[0].Reporter == reporter && reps[0].Count >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("reports after 30s: %+v; want %s x%d", reps, reporter, n)
			}
		}
	}
	for i := range 3 {
		other.PublishFailure(served.Certificate, "parity: worst checksum 43")
		reported(i + 1)
	}
	ts.rechecked(t, 1)
	if _, meta, err := ts.st.Cert(served.Certificate); err != nil || meta.Revoked {
		t.Fatalf("after false reports of one node: %+v, %v; want the certificate live", meta, err)
	}
	ts.srv.rechecks.mu.Lock()
	run := ts.srv.rechecks.run
	ts.srv.rechecks.mu.Unlock()
	if run != 1 {
		t.Errorf("%d re-verifications for 3 reports within --recheck-every, want 1", run)
	}

	if err := os.WriteFile(wrong, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ts.srv.setRecheck(time.Millisecond)
	posted := time.Now()
	other.PublishFailure(served.Certificate, "parity: worst checksum 43")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if len(cl.Entries(t, fleet.Bucket("etest"), fleet.RevokeKey(served.Certificate))) == 1 {
			break
		}
		if time.Now().After(deadline) {
			_, meta, _ := ts.st.Cert(served.Certificate)
			t.Fatalf("no revocation published within 60s of the real failure: %+v", meta)
		}
	}
	_, meta, err := ts.st.Cert(served.Certificate)
	if err != nil || !meta.Revoked || !strings.Contains(meta.Reason, "reproduced by this node's verification") {
		t.Fatalf("after the real failure: %+v, %v", meta, err)
	}
	t.Logf("revoked and published %.3gs after the report: %s", time.Since(posted).Seconds(), meta.Reason)
}

// Failure reports count by the reporter's key: one key under several node
// ids is one reporter; a second key makes the quorum of two.
func TestFleetFailureQuorum(t *testing.T) {
	ts, _, served, _ := evidenceServer(t, nil)
	ts.srv.setRecheck(time.Hour)
	_, key2, _ := ed25519.GenerateKey(nil)
	_, key3, _ := ed25519.GenerateKey(nil)
	now := time.Now()
	for _, f := range []fleet.Failure{
		fleet.NewFailure(key2, served.Certificate, "n2", "parity", now),
		fleet.NewFailure(key2, served.Certificate, "n2-again", "parity", now),
	} {
		if err := ts.srv.fleetFailure(f, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, meta, _ := ts.st.Cert(served.Certificate); meta.Revoked {
		t.Fatalf("one key under two node ids revoked %s: %s", served.Certificate, meta.Reason)
	}
	if err := ts.srv.fleetFailure(fleet.NewFailure(key3, served.Certificate, "n3", "parity", now), now); err != nil {
		t.Fatal(err)
	}
	_, meta, err := ts.st.Cert(served.Certificate)
	if err != nil || !meta.Revoked || !strings.Contains(meta.Reason, "fleet: 2 distinct nodes reported it failed") {
		t.Fatalf("two keys: %+v, %v; want revoked", meta, err)
	}
}

// Clock skew between nodes: reports count by when the fleet's bucket
// stored them, not by the reporters' clocks. Two nodes whose clocks are
// 3 h behind still make a quorum; reports the bucket stored 3 h ago,
// replayed now, do not.
func TestFleetFailureClockSkew(t *testing.T) {
	ts, _, served, _ := evidenceServer(t, nil)
	ts.srv.setRecheck(time.Hour)
	_, key2, _ := ed25519.GenerateKey(nil)
	_, key3, _ := ed25519.GenerateKey(nil)
	now := time.Now()
	old := now.Add(-3 * time.Hour)
	for _, k := range []ed25519.PrivateKey{key2, key3} {
		f := fleet.NewFailure(k, served.Certificate, certs.KeyID(k.Public().(ed25519.PublicKey)), "parity", now)
		f.Stored = old
		if err := ts.srv.fleetFailure(f, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, meta, _ := ts.st.Cert(served.Certificate); meta.Revoked {
		t.Fatalf("two reports the bucket stored 3 h ago (outside the 1 h window) revoked %s: %s", served.Certificate, meta.Reason)
	}
	for _, k := range []ed25519.PrivateKey{key2, key3} {
		f := fleet.NewFailure(k, served.Certificate, "skewed", "parity", old) // the reporter's clock 3 h behind
		f.Stored = now
		if err := ts.srv.fleetFailure(f, now); err != nil {
			t.Fatal(err)
		}
	}
	_, meta, err := ts.st.Cert(served.Certificate)
	if err != nil || !meta.Revoked || !strings.Contains(meta.Reason, "fleet: 2 distinct nodes reported it failed") {
		t.Fatalf("two nodes 3 h behind, reports stored now: %+v, %v; want revoked", meta, err)
	}
}
