//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/fleet"
)

// partitionProblems are the jobs of the partition test's reduce spec.
var partitionProblems = []string{"16384", "24576", "32768", "40960", "49152", "57344", "65536", "73728"}

const partitionSpec = `name: reduce
evaluator: builtin:reduce
problems: [16384, 24576, 32768, 40960, 49152, 57344, 65536, 73728]
schedule: "@every 24h"
budget: {evals: 4}
`

// rogueSpec is tuned by a node no other node trusts.
const rogueSpec = `name: rogue
evaluator: builtin:reduce
problems: [16384]
schedule: "@every 24h"
budget: {evals: 4}
`

// convergeLimit is the time every node must agree within after a heal.
const convergeLimit = 60 * time.Second

// natsLab runs one nats-server, built from the module quasim embeds, in
// each node's namespace. Servers reach each other only through the relay
// in the switch namespace (routes and the addresses they advertise name
// the relay), so the relay's shaping applies to all traffic between
// nodes; a quasimd reaches its own node's server directly.
type natsLab struct {
	t     testing.TB
	bin   string
	net   *netLab
	dir   string
	procs []*exec.Cmd
	logs  []*bytes.Buffer
	exit  []chan error
}

// natsServer builds nats-server once per test run.
func natsServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "nats-server")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("go build nats-server: %v\n%s", err, out)
	}
	return bin
}

func relayClientPort(i int) int { return 14221 + i }
func relayRoutePort(i int) int  { return 16221 + i }

// startNATS starts a server in every node namespace and the relay's
// listeners for their client and route ports.
func startNATS(t testing.TB, l *netLab, r *relay) *natsLab {
	t.Helper()
	n := &natsLab{t: t, bin: natsServer(t), net: l, dir: t.TempDir()}
	for i := range l.nodes {
		for _, p := range [][2]int{{relayClientPort(i), 4222}, {relayRoutePort(i), 6222}} {
			if _, err := r.listen(l.sw, fmt.Sprintf("%s:%d", swIP, p[0]), fmt.Sprintf("%s:%d", nodeIP(i), p[1])); err != nil {
				t.Fatalf("relay: %v", err)
			}
		}
	}
	n.procs = make([]*exec.Cmd, len(l.nodes))
	n.logs = make([]*bytes.Buffer, len(l.nodes))
	n.exit = make([]chan error, len(l.nodes))
	t.Cleanup(func() {
		for i := range n.procs {
			n.kill(i)
		}
	})
	for i := range l.nodes {
		n.start(i)
	}
	return n
}

func (n *natsLab) start(i int) {
	n.t.Helper()
	var routes []string
	for j := range n.net.nodes {
		if j != i {
			routes = append(routes, fmt.Sprintf("%q", fmt.Sprintf("nats-route://%s:%d", swIP, relayRoutePort(j))))
		}
	}
	// Pings every 2 s: a dead link is noticed in about 6 s, not minutes.
	conf := fmt.Sprintf(`server_name: "n%d"
listen: "%s:4222"
client_advertise: "%s:%d"
ping_interval: "2s"
ping_max: 3
jetstream {
  store_dir: %q
  max_memory_store: 64MB
  max_file_store: 1GB
}
cluster {
  name: "quasim-partition"
  listen: "%s:6222"
  advertise: "%s:%d"
  routes: [%s]
}
`, i, nodeIP(i), swIP, relayClientPort(i), filepath.Join(n.dir, fmt.Sprintf("n%d", i)), nodeIP(i), swIP, relayRoutePort(i), strings.Join(routes, ", "))
	path := filepath.Join(n.dir, fmt.Sprintf("n%d.conf", i))
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", n.net.nodes[i], n.bin, "-c", path)
	n.logs[i] = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = n.logs[i], n.logs[i]
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.procs[i] = cmd
	n.exit[i] = make(chan error, 1)
	go func(c chan error) { c <- cmd.Wait() }(n.exit[i])
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := inNS(n.net.nodes[i], func() error {
			c, err := net.DialTimeout("tcp", nodeIP(i)+":4222", time.Second)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nats server %d not listening in 20s: %v\n%s", i, err, n.logs[i])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops server i (SIGKILL); its store stays.
func (n *natsLab) kill(i int) {
	if n.procs[i] == nil {
		return
	}
	n.procs[i].Process.Kill()
	<-n.exit[i]
	n.procs[i] = nil
}

// urls are node i's NATS servers: its own directly, the others through
// the relay.
func natsURLs(l *netLab, i int) string {
	urls := []string{fmt.Sprintf("nats://%s:4222", nodeIP(i))}
	for j := range l.nodes {
		if j != i {
			urls = append(urls, fmt.Sprintf("nats://%s:%d", swIP, relayClientPort(j)))
		}
	}
	return strings.Join(urls, ",")
}

// pnode is one quasimd of the partition test, in its namespace.
type pnode struct {
	name    string
	i       int
	dir     string
	args    []string
	pub     ed25519.PublicKey
	issuer  string
	trusted []string // issuers whose certificates it may serve from the fleet
	p       *proc
	c       *client.Client
	runs    int // quasimd started so far
}

// plab is the partition test's world: namespaces, relay, NATS servers and
// three quasimd (a tunes; b and c serve a's configs), with the checks the
// sampler makes.
type plab struct {
	t     *testing.T
	net   *netLab
	relay *relay
	nats  *natsLab
	nodes []*pnode
	ipBin string

	mu      sync.Mutex
	phase   string
	revoked map[string]time.Time // certificates the test revoked, when
	bodies  map[string]*certs.Certificate
	samples map[string]int           // lookups checked, by phase
	bad     []string                 // invariant violations
	stale   map[string]time.Duration // by phase: longest a follower served a revoked certificate
	strict  map[string]bool          // nodes that must never serve a revoked certificate now
	// diverged are the problems whose nodes did not agree within
	// convergeLimit once: left out of later agreement checks, so that
	// each scenario is measured on its own.
	diverged map[string]bool
}

func (l *plab) startNode(n *pnode) {
	l.t.Helper()
	p := startWith(l.t, n.dir, func(_ string, cmd *exec.Cmd) {
		cmd.Path = l.ipBin
		cmd.Args = append([]string{"ip", "netns", "exec", l.net.nodes[n.i]}, cmd.Args...)
		// QUASIM_PARTITION_LOGS=DIR keeps each run's whole log there.
		if dir := os.Getenv("QUASIM_PARTITION_LOGS"); dir != "" {
			n.runs++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.log", n.name, n.runs)))
			if err != nil {
				l.t.Fatal(err)
			}
			l.t.Cleanup(func() { f.Close() })
			cmd.Stderr = io.MultiWriter(cmd.Stderr, f)
		}
	}, n.args...)
	l.mu.Lock()
	n.p, n.c = p, &client.Client{Socket: p.socket}
	l.mu.Unlock()
}

func (l *plab) setPhase(p string) {
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
	l.t.Logf("phase: %s", p)
}

func (l *plab) violation(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("[%s] ", l.phase) + fmt.Sprintf(format, args...)
	if len(l.bad) < 50 {
		l.bad = append(l.bad, msg)
	}
}

// cert is certificate id, as its issuer's node stores it, verified with
// the issuer's key.
func (l *plab) cert(issuer *pnode, id string) (*certs.Certificate, error) {
	l.mu.Lock()
	c := l.bodies[id]
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, _, err := issuer.c.Cert(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("certificate %s from its issuer %s: %w", id, issuer.name, err)
	}
	c, err = certs.Decode(body)
	if err != nil {
		return nil, err
	}
	if err := certs.Verify(c, issuer.pub); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.bodies[id] = c
	l.mu.Unlock()
	return c, nil
}

// check checks one answer of node n: a config with a certificate must be
// certified (signed, passed) by a key n trusts for that very config and
// job, not failed here, and not revoked where n must know it.
func (l *plab) check(n *pnode, kernel, problem string, cfg api.Config, at time.Time) {
	if cfg.Certificate == "" {
		return // the spec's default: no claim made
	}
	issuer := n
	if cfg.Source == api.SourceFleet {
		if !slices.Contains(n.trusted, cfg.Issuer) {
			l.violation("%s serves %s at %s from untrusted issuer %s", n.name, kernel, problem, cfg.Issuer)
			return
		}
		issuer = nil
		for _, m := range l.nodes {
			if m.issuer == cfg.Issuer {
				issuer = m
			}
		}
		if issuer == nil {
			l.violation("%s serves %s at %s from unknown issuer %s", n.name, kernel, problem, cfg.Issuer)
			return
		}
		if v := cfg.Verification; v != api.VerifyPassed && v != api.VerifyPending {
			l.violation("%s serves fleet certificate %s at %s with verification %q", n.name, cfg.Certificate, problem, v)
		}
	}
	c, err := l.cert(issuer, cfg.Certificate)
	switch {
	case err != nil:
		l.violation("%s serves %s at %s (match %s from %q, source %q, issuer %s, verification %q): %v", n.name, kernel, problem, cfg.Match, cfg.From, cfg.Source, cfg.Issuer, cfg.Verification, err)
		return
	case !c.Passed():
		l.violation("%s serves certificate %s, which records failed checks", n.name, c.ID)
	case c.Key != cfg.Key || c.Job.Kernel != kernel || (cfg.Match == api.MatchExact && c.Job.Problem != problem):
		l.violation("%s serves %s (%s at %s) under certificate %s of %s at %s", n.name, cfg.Key, kernel, problem, c.ID, c.Key, c.Job.Problem)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples[l.phase]++
	rt, revoked := l.revoked[cfg.Certificate]
	if !revoked {
		return
	}
	if issuer == n || l.strict[n.name] {
		msg := fmt.Sprintf("[%s] %s serves revoked certificate %s at %s", l.phase, n.name, cfg.Certificate, problem)
		if len(l.bad) < 50 {
			l.bad = append(l.bad, msg)
		}
		return
	}
	if age := at.Sub(rt); age > l.stale[l.phase] {
		l.stale[l.phase] = age
	}
}

// sample looks every node's answers up once and checks them.
func (l *plab) sample() {
	for _, n := range l.nodes {
		l.mu.Lock()
		c := n.c
		l.mu.Unlock()
		if c == nil {
			continue
		}
		kernels := map[string][]string{"reduce": partitionProblems}
		if n.name != "a" {
			kernels["rogue"] = []string{"16384"}
		}
		for k, ps := range kernels {
			for _, p := range ps {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				cfg, err := c.Config(ctx, k, p, "")
				cancel()
				if err == nil {
					l.check(n, k, p, cfg, time.Now())
				}
			}
		}
	}
}

// served is node n's answer for each reduce problem.
func (l *plab) served(n *pnode) map[string]api.Config {
	out := map[string]api.Config{}
	for _, p := range partitionProblems {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cfg, err := n.c.Config(ctx, "reduce", p, "")
		cancel()
		if err == nil {
			out[p] = cfg
		}
	}
	return out
}

// agreed says at which problems (diverged ones left out) the nodes do
// not all serve the certificate a serves (its own, live, exact), and
// describes the state.
func (l *plab) agreed() ([]string, string) {
	var served []map[string]api.Config
	for _, n := range l.nodes {
		served = append(served, l.served(n))
	}
	var bad []string
	var b strings.Builder
	for _, p := range partitionProblems {
		l.mu.Lock()
		div := l.diverged[p]
		ca := served[0][p]
		_, rev := l.revoked[ca.Certificate]
		l.mu.Unlock()
		ok := ca.Certificate != "" && ca.Match == api.MatchExact && !rev
		fmt.Fprintf(&b, "\n  %s: a=%s(%s)", p, short(ca.Certificate), ca.Key)
		for i, n := range l.nodes[1:] {
			cn := served[i+1][p]
			fmt.Fprintf(&b, " %s=%s(%s,%s,%s)", n.name, short(cn.Certificate), cn.Key, cn.Source, cn.Verification)
			ok = ok && cn.Certificate == ca.Certificate
		}
		if div {
			b.WriteString(" (diverged before)")
		} else if !ok {
			bad = append(bad, p)
		}
	}
	return bad, b.String()
}

func short(id string) string { return id[:min(8, len(id))] }

// converge waits until the nodes agree (agreed) and returns how long that
// took from since; after convergeLimit it fails t, marks the problems
// still in disagreement diverged, and returns -1.
func (l *plab) converge(what string, since time.Time) time.Duration {
	l.t.Helper()
	rest := time.Duration(0) // when the problems that did agree last did
	nbad := -1
	for {
		bad, state := l.agreed()
		if len(bad) == 0 {
			d := time.Since(since)
			l.t.Logf("%s: every node serves a's live certificates %.1f s after it", what, d.Seconds())
			return d
		}
		if nbad >= 0 && len(bad) < nbad {
			rest = time.Since(since)
		}
		nbad = len(bad)
		if time.Since(since) > convergeLimit {
			others := "the other problems never disagreed"
			if rest > 0 {
				others = fmt.Sprintf("the other problems agreed %.1f s after it", rest.Seconds())
			}
			l.t.Errorf("%s: nodes disagree at %v %s after it (%s):%s", what, bad, convergeLimit, others, state)
			l.mu.Lock()
			for _, p := range bad {
				l.diverged[p] = true
			}
			l.mu.Unlock()
			return -1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// revoke revokes the certificate a serves for problem and waits until a
// serves another, certified anew (the re-tune revocation queues); it
// returns the revoked id, or "" after failing t. It may run in a goroutine
// of its own.
func (l *plab) revoke(problem string) string {
	l.t.Helper()
	a := l.nodes[0]
	ctx := context.Background()
	cfg, err := a.c.Config(ctx, "reduce", problem, "")
	if err != nil || cfg.Certificate == "" {
		l.t.Errorf("a at %s: %+v, %v; want a certified config to revoke", problem, cfg, err)
		return ""
	}
	at := time.Now()
	if _, err := a.c.Revoke(ctx, cfg.Certificate, "partition test"); err != nil {
		l.t.Errorf("revoke %s: %v", cfg.Certificate, err)
		return ""
	}
	// Known revoked once the revocation returned: a must not serve it
	// from then on; a follower's staleness counts from at.
	l.mu.Lock()
	l.revoked[cfg.Certificate] = at
	l.mu.Unlock()
	start := time.Now()
	for {
		now, err := a.c.Config(ctx, "reduce", problem, "")
		l.mu.Lock()
		_, rev := l.revoked[now.Certificate]
		l.mu.Unlock()
		if err == nil && now.Certificate != "" && !rev && now.Match == api.MatchExact {
			l.t.Logf("a revoked %s (%s) at %s and certified %s (%s) %.1f s later", short(cfg.Certificate), cfg.Key, problem, short(now.Certificate), now.Key, time.Since(start).Seconds())
			return cfg.Certificate
		}
		if time.Since(start) > 60*time.Second {
			l.t.Errorf("a serves no new certificate at %s 60s after revoking %s: %+v, %v", problem, cfg.Certificate, now, err)
			return ""
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// issuerKey creates node dir's issuer key and returns its public half.
func issuerKey(t *testing.T, dir string) ed25519.PublicKey {
	t.Helper()
	key, _, err := certs.LoadOrCreateKey(filepath.Join(dir, "state", "issuer.key"))
	if err != nil {
		t.Fatal(err)
	}
	return key.Public().(ed25519.PublicKey)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Three real quasimd and three real nats-server in network namespaces the
// test makes, joined by veth pairs to a bridge; a user-space relay on the
// switch carries all traffic between nodes. Node a tunes reduce; b and c
// serve its certificates from the fleet; c also tunes a kernel nobody
// trusts it for. Scenarios: a split off while it revokes and certifies
// (1|2); b split off while a does; 20 flaps in a minute; 200 ms delay with
// 10% of chunks stalled as lost; b restarted with no cluster in reach; c
// restored from an old backup of its store. A sampler checks every answer
// of every node throughout: no untrusted, tampered, failed or (on its
// issuer) revoked certificate is ever served. After each heal every node
// must serve a's live certificates within convergeLimit; the times are
// logged. Needs root and ip; set QUASIM_PARTITION=1 (it takes minutes).
func TestFleetPartitions(t *testing.T) {
	if os.Getenv("QUASIM_PARTITION") != "1" {
		t.Skip("set QUASIM_PARTITION=1 to run the fleet partition test (root, ip; several minutes)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the fleet partition test needs root: it makes network namespaces")
	}
	ipBin, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the fleet partition test needs the ip tool (iproute2)")
	}
	binaries(t)
	netl := newNetLab(t, 3)
	r := newRelay(t, 1)
	l := &plab{t: t, net: netl, relay: r, ipBin: ipBin, revoked: map[string]time.Time{}, bodies: map[string]*certs.Certificate{},
		samples: map[string]int{}, stale: map[string]time.Duration{}, strict: map[string]bool{}, diverged: map[string]bool{}}
	l.phase = "start"
	l.nats = startNATS(t, netl, r)

	// Keys first: b and c trust a.
	for i, name := range []string{"a", "b", "c"} {
		specs := map[string]string{"reduce.yaml": partitionSpec}
		if name != "a" {
			specs["rogue.yaml"] = rogueSpec
		}
		n := &pnode{name: name, i: i, dir: newDir(t, specs)}
		n.pub = issuerKey(t, n.dir)
		n.issuer = certs.KeyID(n.pub)
		l.nodes = append(l.nodes, n)
	}
	a, b, c := l.nodes[0], l.nodes[1], l.nodes[2]
	trust := filepath.Join(t.TempDir(), "trust.d")
	os.MkdirAll(trust, 0o755)
	if err := os.WriteFile(filepath.Join(trust, "a.pub"), []byte(certs.FormatPublicKey(a.pub)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range l.nodes {
		n.args = []string{"--fleet", natsURLs(netl, n.i), "--fleet-name", "ptest", "--fleet-replicas", "3"}
		if n == a {
			n.args = append(n.args, "--fleet-trust", filepath.Join(t.TempDir(), "none"))
			n.trusted = []string{a.issuer}
		} else {
			n.args = append(n.args, "--fleet-trust", trust, "--fleet-wait", "10m")
			n.trusted = []string{a.issuer, n.issuer}
		}
	}
	l.startNode(b)
	l.startNode(c)
	waitJoined(t, b)
	t0 := time.Now()
	l.startNode(a)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			l.sample()
			time.Sleep(200 * time.Millisecond)
		}
	})
	defer func() { stop(); wg.Wait() }()

	l.setPhase("initial")
	l.converge("a's first promotions", t0)
	// c certifies rogue, which b does not trust: b must refuse it.
	if out, errs, code := c.p.ctl("tune", "rogue", "--problem", "16384", "--wait"); code != 0 {
		t.Fatalf("c tune rogue: exit %d: %s%s", code, out, errs)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := b.c.Fleet(context.Background())
		if err == nil && st.Rejected["untrusted"] > 0 {
			t.Logf("b refused %d untrusted offers (c's rogue)", st.Rejected["untrusted"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b saw no untrusted offer in 60s: %+v, %v", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// c's store now, for the restore at the end; c restarts with the
	// cluster in reach.
	backup := filepath.Join(t.TempDir(), "c-backup.db")
	c.p.stop()
	copyFile(t, filepath.Join(c.dir, "state", "quasim.db"), backup)
	restart := time.Now()
	l.startNode(c)
	l.converge("c restarted with the cluster", restart)

	figures := map[string]time.Duration{}

	// 1|2: a alone, revoking and certifying anew; b and c serve what they
	// had, which is all they can know.
	l.setPhase("split a|bc")
	netl.link(0, false)
	time.Sleep(8 * time.Second) // past the servers' ping timeout (3 x 2 s)
	l.revoke(partitionProblems[0])
	l.revoke(partitionProblems[1])
	time.Sleep(5 * time.Second) // split a while longer: nothing may cross
	if bad, state := l.agreed(); len(bad) == 0 {
		t.Errorf("b and c learnt a's revocations through a split:%s", state)
	}
	heal := time.Now()
	netl.link(0, true)
	figures["split a|bc, heal"] = l.converge("heal a|bc", heal)

	// 1|2 the other way: b alone while a revokes; c follows a at once.
	l.setPhase("split b|ac")
	netl.link(1, false)
	time.Sleep(8 * time.Second)
	l.revoke(partitionProblems[2])
	time.Sleep(5 * time.Second)
	heal = time.Now()
	netl.link(1, true)
	figures["split b|ac, heal"] = l.converge("heal b|ac", heal)

	// 20 flaps in a minute: node k%3 cut for 1.5 s, then 1.5 s up; a
	// revokes twice meanwhile.
	l.setPhase("20 flaps")
	flapStart := time.Now()
	var revokes sync.WaitGroup
	for k := range 20 {
		netl.link(k%3, false)
		if k == 4 || k == 12 {
			revokes.Go(func() { l.revoke(partitionProblems[3+k/12]) })
		}
		time.Sleep(1500 * time.Millisecond)
		netl.link(k%3, true)
		time.Sleep(1500 * time.Millisecond)
	}
	revokes.Wait()
	t.Logf("20 flaps (a, b, c in turn, 1.5 s down and 1.5 s up) took %.1f s", time.Since(flapStart).Seconds())
	figures["20 flaps, after the last"] = l.converge("after 20 flaps", time.Now())

	// 200 ms each way, 10% of chunks held 600 ms more as if lost.
	l.setPhase("delay 200ms loss 10%")
	_, _, ch0, st0 := r.counts()
	r.set(shaping{delay: 200 * time.Millisecond, loss: 0.10, stall: 600 * time.Millisecond})
	time.Sleep(5 * time.Second)
	rev := time.Now()
	l.revoke(partitionProblems[5])
	figures["delay+loss, from the revocation"] = l.converge("revocation under 200 ms delay and 10% loss", rev)
	_, _, ch1, st1 := r.counts()
	r.set(shaping{})
	t.Logf("relay under delay and loss: %d chunks, %d stalled as lost (%.1f%%)", ch1-ch0, st1-st0, 100*float64(st1-st0)/float64(max(1, ch1-ch0)))

	// b restarts with no cluster in reach: its own server down and its
	// link cut. What it verified must still be served.
	l.setPhase("b restarted without the cluster")
	before := l.served(b)
	b.p.stop()
	netl.link(1, false)
	l.nats.kill(1)
	l.startNode(b)
	// Its kept offers are held back until it finds the fleet out of reach
	// (its own server refuses at once; the others' dials time out); until
	// then it may answer the default, never anything else.
	restarted := time.Now()
	var back time.Duration
	for back == 0 {
		now, same := l.served(b), true
		for _, p := range partitionProblems {
			switch {
			case now[p].Key == before[p].Key && now[p].Certificate != "":
			case now[p].Match == api.MatchDefault && time.Since(restarted) < fleet.HoldRestored+5*time.Second:
				same = false
			default:
				t.Fatalf("b restarted without the cluster serves %s (certificate %q, %s) at %s; before the restart it served %s (certificate %s, verification %s)",
					now[p].Key, now[p].Certificate, now[p].Match, p, before[p].Key, before[p].Certificate, before[p].Verification)
			}
		}
		if same {
			back = time.Since(restarted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("b restarted without the cluster serves every kept fleet config %.1f s after its start", back.Seconds())
	figures["b restarted without the cluster, to its kept configs"] = back
	for range 10 {
		now := l.served(b)
		for _, p := range partitionProblems {
			if now[p].Key != before[p].Key || now[p].Certificate == "" {
				t.Fatalf("b restarted without the cluster serves %s (certificate %q, %s) at %s after it served its kept config", now[p].Key, now[p].Certificate, now[p].Match, p)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	l.nats.start(1)
	heal = time.Now()
	netl.link(1, true)
	figures["b back with the cluster"] = l.converge("b's server and link back", heal)

	// c restored from its backup, taken before any revocation: it must
	// never serve one of them.
	l.setPhase("c restored from an old backup")
	c.p.stop()
	copyFile(t, backup, filepath.Join(c.dir, "state", "quasim.db"))
	l.mu.Lock()
	l.strict["c"] = true
	l.mu.Unlock()
	restart = time.Now()
	l.startNode(c)
	figures["c restored, from its start"] = l.converge("c restored from the backup", restart)

	stop()
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.bad {
		t.Error(v)
	}
	var phases []string
	for p := range l.samples {
		phases = append(phases, p)
	}
	slices.Sort(phases)
	for _, p := range phases {
		t.Logf("checked %d answers in phase %q; longest a follower served a certificate after a revoked it: %.1f s", l.samples[p], p, l.stale[p].Seconds())
	}
	for _, k := range slices.Sorted(maps.Keys(figures)) {
		t.Logf("convergence: %-36s %.1f s", k, figures[k].Seconds())
	}
	opened, failed, chunks, stalled := r.counts()
	t.Logf("relay: %d connections, %d dials failed, %d chunks, %d stalled; %d certificates revoked", opened, failed, chunks, stalled, len(l.revoked))
}

// waitJoined waits until n has joined its fleet (the bucket exists).
func waitJoined(t *testing.T, n *pnode) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := n.c.Fleet(context.Background())
		if err == nil && st.Node != "" && st.Connected {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not join the fleet in 60s: %+v, %v", n.name, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
