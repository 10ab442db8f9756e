//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The partition test's network: a switch namespace holding a bridge and
// the relay, and one namespace per node, each joined to the bridge by a
// veth pair. Addresses come from labNet and exist only inside these
// namespaces: no packet of the test leaves them.

const (
	labNet = "10.211.0" // a /24 used only inside the lab's namespaces
	swIP   = labNet + ".254"
)

// nodeIP is the address of node i in its namespace.
func nodeIP(i int) string { return fmt.Sprintf("%s.%d", labNet, i+1) }

// netLab is the namespaces and links of one test.
type netLab struct {
	t     testing.TB
	sw    string   // the switch namespace
	nodes []string // node namespaces
}

// ip runs the ip tool and fails t on error.
func ip(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetLab makes the switch and n node namespaces, named after the test
// process so that parallel runs do not meet, and deletes them when the
// test ends (after the processes in them, whose cleanups run first).
func newNetLab(t testing.TB, n int) *netLab {
	t.Helper()
	prefix := fmt.Sprintf("qp%d", os.Getpid())
	l := &netLab{t: t, sw: prefix + "-sw"}
	for i := range n {
		l.nodes = append(l.nodes, fmt.Sprintf("%s-%c", prefix, 'a'+i))
	}
	t.Cleanup(func() {
		for _, ns := range append([]string{l.sw}, l.nodes...) {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	ip(t, "netns", "add", l.sw)
	ip(t, "-n", l.sw, "link", "set", "lo", "up")
	ip(t, "-n", l.sw, "link", "add", "br0", "type", "bridge")
	ip(t, "-n", l.sw, "addr", "add", swIP+"/24", "dev", "br0")
	ip(t, "-n", l.sw, "link", "set", "br0", "up")
	for i, ns := range l.nodes {
		ip(t, "netns", "add", ns)
		ip(t, "-n", ns, "link", "set", "lo", "up")
		ip(t, "-n", l.sw, "link", "add", l.port(i), "type", "veth", "peer", "name", "eth0", "netns", ns)
		ip(t, "-n", l.sw, "link", "set", l.port(i), "master", "br0")
		ip(t, "-n", l.sw, "link", "set", l.port(i), "up")
		ip(t, "-n", ns, "addr", "add", nodeIP(i)+"/24", "dev", "eth0")
		ip(t, "-n", ns, "link", "set", "eth0", "up")
	}
	return l
}

// port is the switch's end of node i's veth pair.
func (l *netLab) port(i int) string { return fmt.Sprintf("v%d", i) }

// link brings node i's link to the switch down (a split: the node, its
// NATS server and its quasimd are cut off from the others) or up again.
func (l *netLab) link(i int, up bool) {
	l.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	ip(l.t, "-n", l.sw, "link", "set", l.port(i), state)
}

// inNS runs f on an OS thread switched into network namespace ns ("" is
// the test's own), so that the sockets f creates belong to ns; a socket
// keeps its namespace for life. The thread is never handed back to the Go
// scheduler: its goroutine ends locked, and the runtime retires it.
func inNS(ns string, f func() error) error {
	if ns == "" {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- fmt.Errorf("netns %s: %w", ns, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		done <- f()
	}()
	return <-done
}

// shaping is what the relay does to each chunk of bytes it forwards: it
// holds it for delay, and with probability loss for stall more, as TCP
// holds the bytes behind a lost segment until its retransmission. Chunks
// of one direction stay in order, so a stalled chunk stalls those behind
// it (head-of-line blocking), as a lost segment does.
type shaping struct {
	delay time.Duration
	loss  float64
	stall time.Duration
}

// relay forwards TCP connections from its listeners to their targets,
// shaped. It is the lab's delay and loss: the kernel here has no netem.
type relay struct {
	mu      sync.Mutex
	shape   shaping
	rng     *rand.Rand
	lns     []net.Listener
	conns   map[net.Conn]bool
	opened  int // connections relayed
	failed  int // connections whose target did not answer
	chunks  int // chunks forwarded
	stalled int // chunks stalled as lost
}

func newRelay(t testing.TB, seed uint64) *relay {
	r := &relay{rng: rand.New(rand.NewPCG(seed, 0)), conns: map[net.Conn]bool{}}
	t.Cleanup(r.close)
	return r
}

// set changes the shaping of every chunk read from now on.
func (r *relay) set(s shaping) {
	r.mu.Lock()
	r.shape = s
	r.mu.Unlock()
}

// counts are the relay's counters: connections, failed dials, chunks and
// stalled chunks.
func (r *relay) counts() (opened, failed, chunks, stalled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opened, r.failed, r.chunks, r.stalled
}

// listen forwards connections to addr (in namespace ns, "" for the
// test's own) to target, dialled from the same namespace; it returns the
// listener's address.
func (r *relay) listen(ns, addr, target string) (string, error) {
	var ln net.Listener
	err := inNS(ns, func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.lns = append(r.lns, ln)
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(ns, c, target)
		}
	}()
	return ln.Addr().String(), nil
}

func (r *relay) serve(ns string, c net.Conn, target string) {
	var d net.Conn
	err := inNS(ns, func() (err error) {
		d, err = net.DialTimeout("tcp", target, 3*time.Second)
		return err
	})
	r.mu.Lock()
	if err != nil || r.conns == nil {
		r.failed++
		r.mu.Unlock()
		c.Close()
		if d != nil {
			d.Close()
		}
		return
	}
	r.opened++
	r.conns[c], r.conns[d] = true, true
	r.mu.Unlock()
	var once sync.Once
	end := func() {
		once.Do(func() {
			c.Close()
			d.Close()
			r.mu.Lock()
			delete(r.conns, c)
			delete(r.conns, d)
			r.mu.Unlock()
		})
	}
	go r.pipe(d, c, end)
	go r.pipe(c, d, end)
}

// pipe copies src to dst, each chunk held as the shaping says when it was
// read; end closes both connections.
func (r *relay) pipe(dst, src net.Conn, end func()) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 4096)
	go func() {
		defer end()
		for c := range q {
			if w := time.Until(c.due); w > 0 {
				time.Sleep(w)
			}
			if _, err := dst.Write(c.b); err != nil {
				for range q {
				}
				return
			}
		}
	}()
	defer close(q)
	var last time.Time
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			due := time.Now().Add(r.shape.delay)
			r.chunks++
			if r.shape.loss > 0 && r.rng.Float64() < r.shape.loss {
				due = due.Add(r.shape.stall)
				r.stalled++
			}
			r.mu.Unlock()
			if due.Before(last) {
				due = last
			}
			last = due
			q <- chunk{b: append([]byte(nil), buf[:n]...), due: due}
		}
		if err != nil { // EOF or a cut: the writer ends both once the queue is out
			return
		}
	}
}

// close stops the listeners and cuts every relayed connection.
func (r *relay) close() {
	r.mu.Lock()
	lns, conns := r.lns, r.conns
	r.lns, r.conns = nil, nil
	r.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for c := range conns {
		c.Close()
	}
}
