package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkLookup measures GET /v1/configs over one keep-alive connection
// against a raw Unix-socket echo of the same request and response sizes, in
// the same run: the echo is the floor any socket API pays.
//
//	go test ./daemon -run '^$' -bench Lookup -benchtime 20000x
func BenchmarkLookup(b *testing.B) {
	ts := newTestServer(b, filepath.Join(b.TempDir(), "none"))
	ts.serve(b, "sgemm", "256,256,256")
	path := "/v1/configs/sgemm?problem=256,256,256"
	status, body := ts.get(b, path, nil)
	if status != 200 {
		b.Fatalf("GET %s = %d %s", path, status, body)
	}
	// What the client writes and reads, headers included, for the echo.
	reqBytes := len(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: quasimd\r\n\r\n", path))
	respBytes := len(body) + 180 // status line and headers

	// A blocking client on one keep-alive connection, as the C and Python
	// runtimes are: write the request, read the response.
	conn, err := net.Dial("unix", ts.socket)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: quasimd\r\n\r\n", path))
	br := bufio.NewReader(conn)
	lookup := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		t0 := time.Now()
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
			b.Fatalf("lookup: %d %v", resp.StatusCode, err)
		}
		resp.Body.Close()
		lookup = append(lookup, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()

	echo := echoLatencies(b, b.N, reqBytes, respBytes)
	lp50, lp99 := percentile(lookup, 0.50), percentile(lookup, 0.99)
	ep50, ep99 := percentile(echo, 0.50), percentile(echo, 0.99)
	b.ReportMetric(float64(lp50.Nanoseconds())/1e3, "lookup_p50_us")
	b.ReportMetric(float64(lp99.Nanoseconds())/1e3, "lookup_p99_us")
	b.ReportMetric(float64(ep50.Nanoseconds())/1e3, "echo_p50_us")
	b.ReportMetric(float64(ep99.Nanoseconds())/1e3, "echo_p99_us")
	b.ReportMetric(float64(lp99)/float64(ep99), "p99_ratio")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "lookups/s")
	b.ReportMetric(0, "ns/op")
}

func echoLatencies(b *testing.B, n, reqBytes, respBytes int) []time.Duration {
	dir, err := os.MkdirTemp("", "qe")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "echo"))
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
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
	c, err := net.Dial("unix", filepath.Join(dir, "echo"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := make([]byte, reqBytes)
	resp := make([]byte, respBytes)
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(t0))
	}
	return out
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
