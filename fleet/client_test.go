package fleet

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/fleet/fleettest"
)

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// cert is a passed certificate of sgemm at problem, signed by k.
func cert(t testing.TB, k ed25519.PrivateKey, problem string) (JobID, []byte) {
	t.Helper()
	raw := testCert(t, k, problem, dev, 1.25)
	return jobIDOf(t, raw), raw
}

// node is a running client; its changes channel gets every job the
// client reports changed.
type node struct {
	*Client
	changes chan JobID
	stop    func()
}

func start(t *testing.T, urls []string, k ed25519.PrivateKey, trusted ...ed25519.PublicKey) *node {
	t.Helper()
	n := &node{changes: make(chan JobID, 1024)}
	c, err := New(Config{
		URLs: urls, Name: "test", Key: k, Trust: NewTrust(trusted...), Replicas: 3,
		OnChange: func(j JobID) {
			select {
			case n.changes <- j:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Client = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	n.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(func() {
		select {
		case <-ctx.Done():
		default:
			n.stop()
		}
	})
	select {
	case <-c.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("fleet client not ready in 30s")
	}
	return n
}

// waitServed waits until n serves raw for job, or fails after d.
func (n *node) waitServed(t *testing.T, job JobID, raw []byte, d time.Duration) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if o, ok := n.Best(job); ok && bytes.Equal(o.Raw, raw) {
			return
		}
		select {
		case <-n.changes:
		case <-deadline.C:
			t.Fatalf("job %s not served from the fleet within %s (status %+v)", job, d, n.Status())
		}
	}
}

func TestPublishWatchRoundTrip(t *testing.T) {
	cl := fleettest.Start(t, 3)
	a, b, c := testKey(1), testKey(2), testKey(3)
	na := start(t, cl.URLs(), a)
	nb := start(t, cl.URLs(), b, pub(a))
	nc := start(t, cl.URLs(), c) // trusts only itself
	if na.NodeID() == "" || na.NodeID() == nb.NodeID() {
		t.Fatalf("node ids %q and %q: want two distinct ids", na.NodeID(), nb.NodeID())
	}
	job, raw := cert(t, a, "64")
	if err := na.PublishCert(raw); err != nil {
		t.Fatal(err)
	}
	nb.waitServed(t, job, raw, 10*time.Second)
	na.waitServed(t, job, raw, 10*time.Second) // its own key is trusted
	// A node that published nothing of its own and received from the same
	// bucket as b serves nothing it does not trust.
	if o, ok := nc.Best(job); ok {
		t.Fatalf("a node that does not trust the issuer serves %s", o.Cert.ID)
	}
	if err := nb.PublishCert(raw); err == nil {
		t.Error("PublishCert of another issuer's certificate: want an error")
	}

	// A revocation reaches b, which stops serving.
	cid := mustDecode(t, raw).ID
	na.PublishRevocation(cid, "test", time.Now())
	deadline := time.After(10 * time.Second)
	for {
		if _, ok := nb.Best(job); !ok {
			break
		}
		select {
		case <-nb.changes:
		case <-deadline:
			t.Fatal("revocation not seen within 10s")
		}
	}
}

func mustDecode(t testing.TB, raw []byte) *certs.Certificate {
	t.Helper()
	c, err := certs.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// One server dies while a node publishes: every record still reaches the
// other node.
func TestServerKilledWhilePublishing(t *testing.T) {
	cl := fleettest.Start(t, 3)
	a, b := testKey(1), testKey(2)
	na := start(t, cl.URLs(), a)
	nb := start(t, cl.URLs(), b, pub(a))
	const n = 40
	jobs := make([]JobID, n)
	raws := make([][]byte, n)
	for i := range n {
		jobs[i], raws[i] = cert(t, a, fmt.Sprint(64+i))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			if err := na.PublishCert(raws[i]); err != nil {
				t.Error(err)
			}
			if i == n/4 {
				cl.Kill(0)
			}
		}
	})
	wg.Wait()
	for i := range n {
		nb.waitServed(t, jobs[i], raws[i], 20*time.Second)
	}
}

// A node that was away catches up: what was published while it was
// stopped, and while the cluster had lost its quorum, reaches it.
func TestReconnectionCatchUp(t *testing.T) {
	cl := fleettest.Start(t, 3)
	a, b := testKey(1), testKey(2)
	na := start(t, cl.URLs(), a)
	nb := start(t, cl.URLs(), b, pub(a))
	nb.stop()

	job1, raw1 := cert(t, a, "64")
	if err := na.PublishCert(raw1); err != nil {
		t.Fatal(err)
	}
	na.waitServed(t, job1, raw1, 10*time.Second) // it is in the bucket
	nb = start(t, cl.URLs(), b, pub(a))
	nb.waitServed(t, job1, raw1, 10*time.Second)

	// Two of three servers down: no quorum, publishing waits in the
	// outbox; when they are back, it goes out and b sees it.
	cl.Kill(1)
	cl.Kill(2)
	job2, raw2 := cert(t, a, "128")
	if err := na.PublishCert(raw2); err != nil {
		t.Fatal(err)
	}
	if st := na.Status(); st.Waiting == 0 && st.Offers < 2 {
		t.Logf("status while partitioned: %+v", st)
	}
	cl.Restart(1)
	cl.Restart(2)
	nb.waitServed(t, job2, raw2, 30*time.Second)
	nb.waitServed(t, job1, raw1, time.Second)
}

// Tampered and untrusted offers written straight into the bucket by
// someone holding no trusted key are never served.
func TestTamperedOnTheWire(t *testing.T) {
	cl := fleettest.Start(t, 3)
	a, b := testKey(1), testKey(2)
	nb := start(t, cl.URLs(), b, pub(a))

	nc, err := nats.Connect(cl.URLs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, Bucket("test"))
	if err != nil {
		t.Fatal(err)
	}
	put := 0
	for i := range 120 {
		job, raw := cert(t, a, fmt.Sprint(1000+i))
		bad := bytes.Clone(raw)
		switch i % 3 {
		case 0: // a changed latency
			bad = bytes.Replace(bad, []byte(`"median_ms":1.25`), []byte(`"median_ms":0.25`), 1)
		case 1: // signed by an untrusted key
			_, bad = cert(t, testKey(byte(10+i)), fmt.Sprint(1000+i))
		case 2: // a byte of the signature changed
			j := bytes.Index(bad, []byte(`"signature":"`)) + len(`"signature":"`) + i%40
			bad[j] ^= 1
		}
		o, _ := json.Marshal(Offer{V: Version, Cert: bad, Node: "00ff", PublishedAt: time.Now()})
		k := CertKey(job, mustDecode(t, bad).Issuer)
		if _, err := kv.Put(ctx, k, o); err != nil {
			t.Fatal(err)
		}
		put++
	}
	// Then a valid one: once it is seen, every earlier record was read.
	job, raw := cert(t, a, "64")
	kb, vb := CertKey(job, mustDecode(t, raw).Issuer), mustOffer(t, raw)
	if _, err := kv.Put(ctx, kb, vb); err != nil {
		t.Fatal(err)
	}
	nb.waitServed(t, job, raw, 10*time.Second)
	st := nb.Status()
	if rej := st.Rejected.Tampered + st.Rejected.Untrusted + st.Rejected.Malformed; rej != put {
		t.Errorf("rejected %+v, want %d in all", st.Rejected, put)
	}
	if st.Offers != 1 {
		t.Errorf("offers = %d, want only the valid one", st.Offers)
	}
}

func mustOffer(t testing.TB, raw []byte) []byte {
	t.Helper()
	o, err := json.Marshal(Offer{V: Version, Cert: raw, Node: "00ff", PublishedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Trial summaries go through the stream to the other nodes, with the
// publisher's node id and nothing else of it.
func TestSummariesRoundTrip(t *testing.T) {
	cl := fleettest.Start(t, 3)
	na := start(t, cl.URLs(), testKey(1))
	nb := start(t, cl.URLs(), testKey(2))
	job := JobID{Kernel: "sgemm", SpecHash: "ab12", Problem: "64", Device: dev}
	for i := range 5 {
		na.PublishSummary(Summary{Job: job, Key: fmt.Sprintf("%d,2", i), Status: "ok", TimeMS: float64(i + 1)})
	}
	// 2.5 s on a quiet machine; under CI's load the cluster's stream took
	// over 10 s to take them once.
	deadline := time.Now().Add(45 * time.Second)
	for len(nb.Summaries("sgemm")) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("b received %d of 5 summaries in 45s", len(nb.Summaries("sgemm")))
		}
		select {
		case <-nb.changes:
		case <-time.After(10 * time.Millisecond):
		}
	}
	for i, s := range nb.Summaries("sgemm") {
		if s.Node != na.NodeID() || s.Job != job || s.Key != fmt.Sprintf("%d,2", i) || s.TimeMS != float64(i+1) || s.V != Version {
			t.Errorf("summary %d = %+v", i, s)
		}
	}
	if n := len(na.Summaries("sgemm")); n != 0 {
		t.Errorf("a holds %d of its own summaries, want none", n)
	}
}

// A node told to trust a key later serves what that key certified before,
// and stops when the key is no longer trusted.
func TestSetTrust(t *testing.T) {
	cl := fleettest.Start(t, 3)
	a := testKey(1)
	na := start(t, cl.URLs(), a)
	nb := start(t, cl.URLs(), testKey(2))
	job, raw := cert(t, a, "64")
	if err := na.PublishCert(raw); err != nil {
		t.Fatal(err)
	}
	na.waitServed(t, job, raw, 10*time.Second)
	// b left it out as untrusted: its rejection count says it has read it.
	deadline := time.Now().Add(10 * time.Second)
	for nb.Status().Rejected.Untrusted == 0 {
		if time.Now().After(deadline) {
			t.Fatal("b never read the offer")
		}
		select {
		case <-nb.changes:
		case <-time.After(10 * time.Millisecond):
		}
	}
	nb.SetTrust(NewTrust(pub(a)))
	nb.waitServed(t, job, raw, 10*time.Second)
	nb.SetTrust(nil)
	// Read again under the new trust: left out as untrusted once more.
	deadline = time.Now().Add(10 * time.Second)
	for nb.Status().Rejected.Untrusted == 0 {
		if time.Now().After(deadline) {
			t.Fatal("b did not read the bucket again")
		}
		select {
		case <-nb.changes:
		case <-time.After(10 * time.Millisecond):
		}
	}
	if o, ok := nb.Best(job); ok {
		t.Fatalf("b still serves %s after the key was dropped", o.Cert.ID)
	}
}
