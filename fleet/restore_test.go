package fleet

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/fleet/fleettest"
)

// Records a node kept (OnRecord) go back into a new client's view before
// it runs, verified again under its trust; once it joins, the offers the
// bucket no longer holds go, and OnRecord is told. A single server.
func TestRestore(t *testing.T) {
	cl := fleettest.Start(t, 1)
	a, b := testKey(1), testKey(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := func(c *Client) (stop func()) {
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { c.Run(cctx); close(done) }()
		select {
		case <-c.Ready():
		case <-time.After(30 * time.Second):
			t.Fatal("not joined in 30s")
		}
		return func() { ccancel(); <-done }
	}
	na, err := New(Config{URLs: cl.URLs(), Name: "rtest", Key: a, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer run(na)()
	job64, raw64 := cert(t, a, "64")
	job128, raw128 := cert(t, a, "128")
	for _, raw := range [][]byte{raw64, raw128} {
		if err := na.PublishCert(raw); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	kept := map[string][]byte{}
	onRecord := func(key string, data []byte, deleted bool) {
		mu.Lock()
		defer mu.Unlock()
		if deleted {
			delete(kept, key)
		} else {
			kept[key] = data
		}
	}
	nb, err := New(Config{URLs: cl.URLs(), Name: "rtest", Key: b, Trust: NewTrust(pub(a)), OnRecord: onRecord, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	stopB := run(nb)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(kept)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kept %d records in 30s, want 2", n)
		}
	}
	synced := nb.Status().Synced
	stopB()
	var recs []Record
	mu.Lock()
	for k, v := range kept {
		recs = append(recs, Record{Key: k, Data: v})
	}
	mu.Unlock()

	// A node that trusts nobody takes none of them.
	if n := mustNew(t, Config{URLs: cl.URLs(), Name: "rtest", Key: b}).Restore(recs, synced); n != 0 {
		t.Errorf("an untrusting node restored %d records", n)
	}
	// live64 is set when OnChange tells of job64 with its offer live: what
	// a daemon waits for to drop the default it answered while held.
	var nc *Client
	var live64 bool
	onChange := func(j JobID) {
		if _, ok := nc.Best(j); ok && j == job64 && !nc.Holding(j) {
			mu.Lock()
			live64 = true
			mu.Unlock()
		}
	}
	nc = mustNew(t, Config{URLs: cl.URLs(), Name: "rtest", Key: b, Trust: NewTrust(pub(a)), OnRecord: onRecord, OnChange: onChange, Log: zerolog.Nop()})
	if n := nc.Restore(recs, synced); n != 2 {
		t.Fatalf("Restore = %d, want 2", n)
	}
	// Held back until the bucket replays them, or the fleet is found out
	// of reach.
	st := nc.Status()
	if _, ok := nc.Best(job64); ok || !nc.Holding(job64) || st.Restored != 2 || st.Live || !st.Synced.Equal(synced) {
		t.Fatalf("restored, before joining: best of 64 %v, holding %v, status %+v", ok, nc.Holding(job64), st)
	}
	if other := (JobID{Kernel: "other", Problem: "64"}); nc.Holding(other) {
		t.Fatal("a job with no restored offer is said to be held")
	}

	// Out of reach: served at once. The daemon reloads its trust at every
	// start: what was restored stays; without a's key it goes, and comes
	// back with it.
	nd := mustNew(t, Config{URLs: []string{"nats://127.0.0.1:1"}, Name: "rtest", Key: b, Trust: NewTrust(pub(a)), Log: zerolog.Nop()})
	nd.Restore(recs, synced)
	nd.SetTrust(NewTrust(pub(a)))
	dctx, dcancel := context.WithCancel(ctx)
	ddone := make(chan struct{})
	go func() { nd.Run(dctx); close(ddone) }()
	for deadline := time.Now().Add(HoldRestored / 2); nd.Holding(job64); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("restored offers still held back with the fleet out of reach")
		}
	}
	if _, ok := nd.Best(job64); !ok {
		t.Fatal("fleet out of reach: the restored offer of 64 is not served")
	}
	if _, ok := nd.Best(job128); !ok {
		t.Fatal("fleet out of reach: the restored offer of 128 is not served")
	}
	nd.SetTrust(nil)
	if _, ok := nd.Best(job64); ok {
		t.Fatal("a's key dropped: the offer of 64 is still held")
	}
	nd.SetTrust(NewTrust(pub(a)))
	if _, ok := nd.Best(job64); !ok {
		t.Fatal("a's key trusted again: the offer of 64 is not back")
	}
	dcancel()
	<-ddone

	// The offer of 128 leaves the bucket while c is away.
	conn, err := nats.Connect(cl.URLs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, _ := jetstream.New(conn)
	kv, err := js.KeyValue(ctx, Bucket("rtest"))
	if err != nil {
		t.Fatal(err)
	}
	key128 := CertKey(job128, mustDecode(t, raw128).Issuer)
	if err := kv.Delete(ctx, key128); err != nil {
		t.Fatal(err)
	}
	defer run(nc)()
	if _, ok := nc.Best(job128); ok {
		t.Error("after joining, the offer the bucket no longer holds is still served")
	}
	if _, ok := nc.Best(job64); !ok {
		t.Error("after joining, the offer of 64 is gone")
	}
	mu.Lock()
	_, still := kept[key128]
	mu.Unlock()
	if still {
		t.Error("OnRecord was not told the offer of 128 went")
	}
	if st := nc.Status(); !st.Live {
		t.Errorf("after joining: status %+v, want live", st)
	}
	// The bucket replayed the offer of 64 unchanged while it was held:
	// OnChange must still say when it went live, or a daemon's lookups
	// keep the default they answered meanwhile.
	mu.Lock()
	told := live64
	mu.Unlock()
	if !told {
		t.Error("the offer of 64 went live at the replay's end and OnChange was not told")
	}

	// Restored from an old backup: the offer of 64 was revoked since. It
	// is never served, not even before the bucket replays.
	id64 := mustDecode(t, raw64).ID
	na.PublishRevocation(id64, "superseded", time.Now())
	for deadline := time.Now().Add(30 * time.Second); len(cl.Entries(t, Bucket("rtest"), "revoke.>")) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the revocation is not in the bucket after 30s")
		}
	}
	ne := mustNew(t, Config{URLs: cl.URLs(), Name: "rtest", Key: b, Trust: NewTrust(pub(a)), Log: zerolog.Nop()})
	ne.Restore(recs, synced)
	ectx, ecancel := context.WithCancel(ctx)
	defer ecancel()
	go ne.Run(ectx)
	samples := 0
	for joined := false; !joined; samples++ {
		select {
		case <-ne.Ready():
			joined = true
		case <-time.After(30 * time.Second):
			t.Fatal("not joined in 30s")
		default:
		}
		if o, ok := ne.Best(job64); ok {
			t.Fatalf("restored from an old backup: revoked offer %.12s served (sample %d)", o.Cert.ID, samples)
		}
	}
	if _, ok := ne.Best(job64); ok || ne.Holding(job64) {
		t.Errorf("after joining: offer of 64 served %v, holding %v", ok, ne.Holding(job64))
	}
	t.Logf("restored from an old backup: the revoked offer never served in %d samples until the bucket replayed", samples)
}

func mustNew(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
