package fleettest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is a JetStream cluster of servers on 127.0.0.1, each with its
// store in the test's temporary directory.
type Cluster struct {
	t       testing.TB
	name    string
	dir     string
	mu      sync.Mutex
	servers []*server.Server // nil while killed
	ports   []int            // client ports, kept across restarts
	routes  []int            // cluster ports, kept across restarts
}

// Start starts a cluster of n servers (n = 1: a single server, no
// cluster) and stops it when the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, name: "quasim-test", dir: t.TempDir(), servers: make([]*server.Server, n), ports: make([]int, n), routes: make([]int, n)}
	t.Cleanup(c.Stop)
	for i := range n {
		c.start(i)
	}
	return c
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	opts := &server.Options{
		ServerName: "n" + strconv.Itoa(i),
		Host:       "127.0.0.1",
		Port:       c.ports[i],
		JetStream:  true,
		StoreDir:   filepath.Join(c.dir, "n"+strconv.Itoa(i)),
		// Small limits: the defaults size themselves on the machine.
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  1 << 30,
		NoSigs:             true,
		NoLog:              true,
		Cluster:            server.ClusterOpts{Name: c.name, Host: "127.0.0.1", Port: c.routes[i]},
	}
	if opts.Port == 0 {
		opts.Port = -1
	}
	if opts.Cluster.Port == 0 {
		opts.Cluster.Port = -1
	}
	var routes []string
	for j, p := range c.routes {
		if j != i && p != 0 {
			routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
		}
	}
	opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	if len(c.servers) == 1 {
		// One server is no cluster: clustered JetStream would wait for
		// peers to elect a meta leader.
		opts.Cluster, opts.Routes = server.ClusterOpts{}, nil
		// A second create of the 1 GiB trials stream is refused for
		// storage before it is found to exist: room for it (a limit;
		// nothing is allocated).
		opts.JetStreamMaxStore = 4 << 30
	}
	s, err := server.NewServer(opts)
	if err != nil {
		c.t.Fatalf("nats server %d: %v", i, err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		c.t.Fatalf("nats server %d not ready in 20s", i)
	}
	u, err := url.Parse(s.ClientURL())
	if err != nil {
		c.t.Fatalf("nats server %d url: %v", i, err)
	}
	port, _ := strconv.Atoi(u.Port())
	c.mu.Lock()
	c.servers[i], c.ports[i] = s, port
	if a := s.ClusterAddr(); a != nil {
		c.routes[i] = a.Port
	}
	c.mu.Unlock()
}

// URLs are the client URLs of every server, killed ones included.
func (c *Cluster) URLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.ports))
	for i, p := range c.ports {
		out[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	return out
}

// Kill shuts server i down.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	s := c.servers[i]
	c.servers[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Restart starts killed server i again, on its ports and store.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.start(i)
}

// WaitBucket waits until KV bucket exists, or fails t after d.
func (c *Cluster) WaitBucket(t testing.TB, bucket string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	nc, err := nats.Connect(strings.Join(c.URLs(), ","), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := js.KeyValue(actx, bucket)
		acancel()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bucket %s not there within %s: %v", bucket, d, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// client connects to the cluster for a test's reads: a context of 20 s,
// the JetStream API, and done to close both.
func (c *Cluster) client(t testing.TB) (context.Context, jetstream.JetStream, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	nc, err := nats.Connect(strings.Join(c.URLs(), ","))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		cancel()
		t.Fatal(err)
	}
	return ctx, js, func() { nc.Close(); cancel() }
}

// Entries are the current values of KV bucket's keys that match filter,
// by key.
// A read cut short by its 20 s deadline (a 2-core machine loaded by other
// test packages stalled the embedded cluster past it in CI) is tried again,
// on a new connection, up to three times, and logged.
func (c *Cluster) Entries(t testing.TB, bucket, filter string) map[string][]byte {
	t.Helper()
	for try := 1; ; try++ {
		out, err := c.entries(t, bucket, filter)
		if err == nil {
			return out
		}
		if !errors.Is(err, context.DeadlineExceeded) || try == 3 {
			t.Fatalf("entries %s of %s: %v", filter, bucket, err)
		}
		t.Logf("entries %s of %s: %v; trying again", filter, bucket, err)
	}
}

func (c *Cluster) entries(t testing.TB, bucket, filter string) (map[string][]byte, error) {
	ctx, js, done := c.client(t)
	defer done()
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	l, err := kv.ListKeysFiltered(ctx, filter)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for k := range l.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", k, err)
		}
		out[k] = e.Value()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the key list may have been cut short
	}
	return out, nil
}

// Messages are the data of every message stored in stream, in order.
func (c *Cluster) Messages(t testing.TB, stream string) [][]byte {
	t.Helper()
	ctx, js, done := c.client(t)
	defer done()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("stream %s message %d: %v", stream, seq, err)
		}
		out = append(out, m.Data)
	}
	return out
}

// Stop shuts every server down.
func (c *Cluster) Stop() {
	for i := range c.servers {
		c.Kill(i)
	}
}
