package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkLookup measures GET /v1/configs over keep-alive connections
// against a raw Unix-socket echo of the same request and response sizes, in
// the same run: the echo is the floor any socket API pays. clients=1 is one
// connection; clients=8 is eight at once, each its own connection and
// goroutine, as TestLookupsDuringCycle's clients (b.N lookups in all, and
// as many echoes).
//
//	go test ./daemon -run '^$' -bench '^BenchmarkLookup$' -benchtime 20000x
func BenchmarkLookup(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchLookup(b, clients) })
	}
}

func benchLookup(b *testing.B, clients int) {
	ts := newTestServer(b, filepath.Join(b.TempDir(), "none"))
	ts.serve(b, "sgemm", "256,256,256")
	path := "/v1/configs/sgemm?problem=256,256,256"
	status, body := ts.get(b, path, nil)
	if status != 200 {
		b.Fatalf("GET %s = %d %s", path, status, body)
	}
	req := []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: quasimd\r\n\r\n", path))
	// The whole response, headers included, for the echo.
	conn, err := net.Dial("unix", ts.socket)
	if err != nil {
		b.Fatal(err)
	}
	conn.Write(req)
	resp, _, err := readAnswer(bufio.NewReader(conn), nil)
	conn.Close()
	if err != nil {
		b.Fatal(err)
	}
	respBytes := len(resp)

	// Blocking clients, one keep-alive connection each, as the C and
	// Python runtimes are: write the request, read the response. A
	// client reads it as they do, without allocating, so that the GC the
	// client would drive in this process does not slow the server. The
	// lookups and the echo take turns, rounds of each, so that both meet
	// the same load from the rest of the machine.
	const rounds = 10
	per := max(b.N/clients/rounds, 1)
	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("unix", ts.socket); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	echo := newEcho(b, clients, len(req), respBytes)
	lookup := make([][]time.Duration, clients)
	var echoed []time.Duration
	var elapsed time.Duration
	b.ResetTimer()
	for range rounds {
		errs := make(chan error, clients)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range clients {
			wg.Go(func() {
				c := conns[i]
				br := bufio.NewReaderSize(c, 8192)
				buf := make([]byte, 0, 8192)
				for range per {
					t0 := time.Now()
					if _, err := c.Write(req); err != nil {
						errs <- err
						return
					}
					var status int
					var err error
					if buf, status, err = readAnswer(br, buf); err != nil || status != 200 {
						errs <- fmt.Errorf("lookup: %d %v", status, err)
						return
					}
					lookup[i] = append(lookup[i], time.Since(t0))
				}
			})
		}
		wg.Wait()
		elapsed += time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		echoed = append(echoed, echo.run(b, per)...)
	}
	b.StopTimer()

	all := slices.Concat(lookup...)
	lp50, lp99 := percentile(all, 0.50), percentile(all, 0.99)
	ep50, ep99 := percentile(echoed, 0.50), percentile(echoed, 0.99)
	b.ReportMetric(float64(lp50.Nanoseconds())/1e3, "lookup_p50_us")
	b.ReportMetric(float64(lp99.Nanoseconds())/1e3, "lookup_p99_us")
	b.ReportMetric(float64(ep50.Nanoseconds())/1e3, "echo_p50_us")
	b.ReportMetric(float64(ep99.Nanoseconds())/1e3, "echo_p99_us")
	b.ReportMetric(float64(lp99)/float64(ep99), "p99_ratio")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "lookups/s")
	b.ReportMetric(0, "ns/op")
}

// readAnswer reads one HTTP/1.1 response with a Content-Length from br,
// whole, into buf[:0] (grown when short), and returns it with its status.
func readAnswer(br *bufio.Reader, buf []byte) ([]byte, int, error) {
	buf = buf[:0]
	length := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return buf, 0, err
		}
		buf = append(buf, line...)
		if len(line) == 2 {
			break
		}
		if name, value, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return buf, 0, err
			}
		}
	}
	if len(buf) < 12 || !bytes.HasPrefix(buf, []byte("HTTP/1.1 ")) || length < 0 {
		return buf, 0, fmt.Errorf("not an HTTP/1.1 answer with a Content-Length: %q", buf)
	}
	status, err := strconv.Atoi(string(buf[9:12]))
	if err != nil {
		return buf, 0, err
	}
	n := len(buf)
	buf = slices.Grow(buf, length)[:n+length]
	if _, err := io.ReadFull(br, buf[n:]); err != nil {
		return buf, 0, err
	}
	return buf, status, nil
}

// echoBench is a Unix-socket echo server of fixed request and response
// sizes, with clients connected to it.
type echoBench struct {
	conns               []net.Conn
	reqBytes, respBytes int
}

func newEcho(b *testing.B, clients, reqBytes, respBytes int) *echoBench {
	dir, err := os.MkdirTemp("", "qe")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "echo"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				in := make([]byte, reqBytes)
				out := make([]byte, respBytes)
				for {
					if _, err := io.ReadFull(r, in); err != nil {
						return
					}
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	e := &echoBench{reqBytes: reqBytes, respBytes: respBytes}
	for range clients {
		c, err := net.Dial("unix", filepath.Join(dir, "echo"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		e.conns = append(e.conns, c)
	}
	return e
}

// run times n exchanges on each connection at once.
func (e *echoBench) run(b *testing.B, n int) []time.Duration {
	lat := make([][]time.Duration, len(e.conns))
	var wg sync.WaitGroup
	for i, c := range e.conns {
		wg.Go(func() {
			req := make([]byte, e.reqBytes)
			resp := make([]byte, e.respBytes)
			out := make([]time.Duration, 0, n)
			for range n {
				t0 := time.Now()
				if _, err := c.Write(req); err != nil {
					return
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					return
				}
				out = append(out, time.Since(t0))
			}
			lat[i] = out
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	if len(all) != len(e.conns)*n {
		b.Fatalf("echo: %d of %d exchanges", len(all), len(e.conns)*n)
	}
	return all
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
