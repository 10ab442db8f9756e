package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quasim/quasim/daemon/sockapi"
)

// netHTTPSocket serves ts's handler on a second socket through net/http
// alone, as quasimd did before the fast loop.
func netHTTPSocket(t *testing.T, ts *testServer) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := sockapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: ts.handler(), ConnContext: sockapi.ConnCred, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return sock
}

// rawExchange writes raw on a new connection to sock and reads n responses.
func rawExchange(t *testing.T, sock, raw string, n int) []string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []string
	heads := strings.Split(raw, "\r\n\r\n") // no request here has a body
	for i := range n {
		method, _, _ := strings.Cut(heads[i], " ")
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("%q: read response %d: %v", raw, len(out), err)
		}
		out = append(out, answerSeen(t, resp))
	}
	return out
}

// answerSeen is what a client sees of resp: status, headers but Date and
// the framing ones (net/http chunks a long answer, the fast loop gives its
// length), whether the connection closes, and the body.
func answerSeen(t *testing.T, resp *http.Response) string {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d close=%v\n", resp.Proto, resp.StatusCode, resp.Close)
	h := resp.Header.Clone()
	for _, k := range []string{"Date", "Content-Length", "Transfer-Encoding"} {
		h.Del(k)
	}
	h.Write(&b)
	b.Write(body)
	return b.String()
}

// lookupCounts is quasim_config_lookups_total by its labels, gathered
// from reg, which holds it.
func lookupCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "quasim_config_lookups_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			var ls []string
			for _, l := range mt.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(ls, ",")] = mt.GetCounter().GetValue()
		}
	}
	return out
}

func countsDelta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// randomLookup is a GET /v1/configs request of the kinds runtimes send,
// and of kinds they should not.
func randomLookup(rng *rand.Rand, etag string) string {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	if rng.IntN(10) < 6 { // as the runtimes ask
		hdr := pick("", "If-None-Match: "+etag+"\r\n", "User-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n", "Accept: application/json\r\n")
		return "GET /v1/configs/sgemm?problem=" + pick("256,256,256", "256%2C256%2C256", "300,300,300", "128,128,128") +
			" " + pick("HTTP/1.1", "HTTP/1.0") + "\r\nHost: quasimd\r\n" + hdr + "\r\n"
	}
	kernel := pick("sgemm", "sgemm", "sgemm", "reduce", "nope", "%73gemm", "sgemm/x", ".", "Sgemm")
	var q []string
	for range rng.IntN(4) {
		switch rng.IntN(9) {
		case 0, 1, 2:
			q = append(q, "problem="+pick("256,256,256", "256%2C256%2C256", "256x256x256", "300,300,300", "128,128,128",
				"", "abc", "256,256", "4096%2c4096%2C4096", "256,256,256+", "%zz", "1;2"))
		case 3:
			q = append(q, "device="+pick("", "cpu/other", "cpu%2Fother", "x+y"))
		case 4:
			q = append(q, "objective="+pick("", "energy", "latency", "bogus"))
		case 5:
			q = append(q, "max_slowdown="+pick("", "1.1", "2", "x"))
		case 6:
			q = append(q, "wait="+pick("", "0", "0s", "1ms", "bad", "-1s"))
		case 7:
			q = append(q, pick("other=1", "", "=", "problem", "a=%41"))
		case 8:
			q = append(q, "problem=256,256,256", "problem=128,128,128")
		}
	}
	target := "/v1/configs/" + kernel
	if len(q) > 0 || rng.IntN(4) == 0 {
		target += "?" + strings.Join(q, "&")
	}
	proto := pick("HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0")
	var hdr []string
	switch rng.IntN(8) {
	case 0:
		hdr = append(hdr, "Host: localhost:1")
	case 1:
		hdr = append(hdr, "Host: evil.example")
	case 2:
		if proto == "HTTP/1.1" {
			hdr = append(hdr, "Host: quasimd")
		} // else none
	case 3:
		hdr = append(hdr, "host:   QUASIMD \t")
	default:
		hdr = append(hdr, "Host: quasimd")
	}
	switch rng.IntN(6) {
	case 0:
		hdr = append(hdr, "If-None-Match: "+etag)
	case 1:
		hdr = append(hdr, `If-None-Match: "other"`)
	}
	switch rng.IntN(12) {
	case 0:
		hdr = append(hdr, "Origin: http://evil.example")
	case 1:
		hdr = append(hdr, "Referer:")
	case 2:
		hdr = append(hdr, "Connection: keep-alive")
	case 3:
		hdr = append(hdr, "User-Agent: quasim-c/1", "Accept: application/json")
	case 4:
		hdr = append(hdr, "X-Bad : 1")
	}
	rng.Shuffle(len(hdr), func(i, j int) { hdr[i], hdr[j] = hdr[j], hdr[i] })
	method := "GET"
	if rng.IntN(20) == 0 {
		method = "HEAD"
	}
	return method + " " + target + " " + proto + "\r\n" + strings.Join(hdr, "\r\n") + "\r\n\r\n"
}

// TestFastLookupSameAsNetHTTP sends many lookups, of every kind a runtime
// sends and others, to the socket and to the same handler served by
// net/http alone: each gets the same answer (status, headers, body) and is
// counted the same in quasim_config_lookups_total.
func TestFastLookupSameAsNetHTTP(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	ts.srv.metrics = newMetrics(ts.sched)
	reg := prometheus.NewRegistry() // the lookups' counter alone: quick to gather
	reg.MustRegister(ts.srv.metrics.lookups)
	ts.serve(t, "sgemm", "256,256,256")
	plain := netHTTPSocket(t, ts)
	status, _ := ts.get(t, "/v1/configs/sgemm?problem=256,256,256", nil)
	if status != 200 {
		t.Fatalf("first lookup = %d", status)
	}
	resp := rawExchange(t, ts.socket, "GET /v1/configs/sgemm?problem=256,256,256 HTTP/1.1\r\nHost: quasimd\r\n\r\n", 1)[0]
	_, etag, _ := strings.Cut(resp, "Etag: ")
	etag, _, _ = strings.Cut(etag, "\r\n")

	handed0, handled0 := ts.api.Handed()
	rng := rand.New(rand.NewPCG(3, 4))
	n := uint64(1500)
	if testing.Short() {
		n = 300 // CI's race pass
	}
	for i := range n {
		raw := randomLookup(rng, etag)
		// Each order: the first asked may make and cache the answer the
		// second gets from the cache.
		socks := []string{ts.socket, plain}
		if rng.IntN(2) == 0 {
			socks[0], socks[1] = socks[1], socks[0]
		}
		var got [2]string
		var counted [2]map[string]float64
		for k, sock := range socks {
			before := lookupCounts(t, reg)
			got[k] = rawExchange(t, sock, raw, 1)[0]
			counted[k] = countsDelta(before, lookupCounts(t, reg))
		}
		if got[0] != got[1] {
			t.Fatalf("request %d %q:\n%s answered\n%s\n%s answered\n%s", i, raw, socks[0], got[0], socks[1], got[1])
		}
		if fmt.Sprint(counted[0]) != fmt.Sprint(counted[1]) {
			t.Fatalf("request %d %q: counted %v by %s, %v by %s", i, raw, counted[0], socks[0], counted[1], socks[1])
		}
	}
	handed, handled := ts.api.Handed()
	handed, handled = handed-handed0, handled-handled0
	fast := n - handed - handled
	t.Logf("%d requests: %d answered from the cache by the fast loop, %d by the handler on it, %d handed to net/http", n, fast, handled, handed)
	if fast < n/4 || handled < n/20 || handed < n/20 {
		t.Errorf("the requests did not take every path enough: %d cached, %d handler, %d handed", fast, handled, handed)
	}
}

// TestFastLookupKeepAlive sends requests back to back on one connection,
// lookups the fast loop answers, one it hands to net/http and lookups
// after that, and compares the answers with net/http's alone; a write
// after the hand-over still knows the peer's credentials.
func TestFastLookupKeepAlive(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	ts.serve(t, "sgemm", "256,256,256")
	plain := netHTTPSocket(t, ts)
	get := func(target string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: quasimd\r\n\r\n"
	}
	pipeline := get("/v1/configs/sgemm?problem=256,256,256") +
		get("/v1/configs/sgemm?problem=300,300,300") +
		get("/v1/configs/nope") +
		get("/v1/configs/sgemm?problem=256%2C256%2C256") +
		get("/v1/status") + // handed over with what follows it
		get("/v1/configs/sgemm?problem=256,256,256") +
		"POST /v1/reload HTTP/1.1\r\nHost: quasimd\r\nContent-Length: 0\r\n\r\n" +
		get("/v1/configs/sgemm?problem=256,256,256")
	const n = 8
	handed0, _ := ts.api.Handed()
	got := rawExchange(t, ts.socket, pipeline, n)
	want := rawExchange(t, plain, pipeline, n)
	for i := range n {
		if i == 4 {
			continue // status: uptime and counts move
		}
		if got[i] != want[i] {
			t.Errorf("response %d:\n%s\nnet/http alone:\n%s", i, got[i], want[i])
		}
	}
	if !strings.HasPrefix(got[6], "HTTP/1.1 200") {
		t.Errorf("reload after the hand-over, as the daemon's own uid: %s", got[6])
	}
	if handed, _ := ts.api.Handed(); handed-handed0 != 1 {
		d := handed - handed0
		t.Errorf("%d hand-overs, want 1", d)
	}
}

// TestFastLookupShutdown checks Shutdown closes idle connections at once
// and lets a request in progress finish.
func TestFastLookupShutdown(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	ts.serve(t, "sgemm", "256,256,256")
	ss := ts.api
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("unix", ts.socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /v1/configs/sgemm?problem=256,256,256 HTTP/1.1\r\nHost: quasimd\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// Half a request: active, it gets its answer once whole.
	busy, err := net.Dial("unix", ts.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, "GET /v1/configs/sgemm?problem=256,256,256 HTTP/1.1\r\n")
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- ss.Shutdown(ctx)
	}()
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("idle connection after Shutdown: read %d, %v; want EOF", n, err)
		}
	}
	io.WriteString(busy, "Host: quasimd\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the request in progress: %v", err)
	}
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("the request in progress: %d, close %v; want 200, close", resp.StatusCode, resp.Close)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := net.Dial("unix", ts.socket); err == nil {
		t.Error("the socket still accepts after Shutdown")
	}
}
