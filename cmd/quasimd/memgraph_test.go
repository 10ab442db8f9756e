package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// rawPost sends one POST by hand on the socket; size is the announced
// Content-Length, body what is actually written.
func (d *proc) rawPost(path string, size int, body string) (int, string) {
	d.t.Helper()
	c, err := net.Dial("unix", d.socket)
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: quasimd\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", path, size, body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMemgraphPlanEndToEnd: quasimctl memgraph plan through the real
// quasimd gives the offline answer; bad input gets a 4xx naming what is
// wrong, a huge announced body a 413 before it is sent, and quasimd
// stays up; with quasimd gone, quasimctl plans offline and says so.
func TestMemgraphPlanEndToEnd(t *testing.T) {
	t.Parallel()
	d := start(t, newDir(t, nil))
	graph := "../../memgraph/testdata/hand_landmark_full.json"
	var served, offline api.MemPlan
	d.ctlJSON(&served, "memgraph", "plan", graph)
	d.ctlJSON(&offline, "memgraph", "plan", graph, "--offline")
	if served.Peak != offline.Peak || served.Peak != served.LowerBound || served.BySize != offline.BySize || len(served.Placements) != 166 {
		t.Fatalf("served %+v\noffline %+v", served, offline)
	}
	out, errs, code := d.ctl("memgraph", "plan", graph)
	if code != 0 || !strings.Contains(out, "planned by quasimd") || errs != "" {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}

	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/memgraph/plan", `{"ops":[{"id":"a"}],"tensors":[{"id":"x","bytes":-1,"input":true}]}`, 400, `tensor \"x\": bytes -1 outside`},
		{"/v1/memgraph/plan?format=onnx", "\x3a\x04\x0a\x02\x0a\x05", 400, "model.graph.node[0]: field 1: unexpected EOF"},
		{"/v1/memgraph/plan", `{"order":"free","ops":[{"id":"a"}],"tensors":[{"id":"x","bytes":8,"producer":"a","consumers":["a"]}]}`, 400, `op \"a\" consumes its own output (a cycle)`},
	} {
		st, b := d.rawPost(c.path, len(c.body), c.body)
		if st != c.status || !strings.Contains(b, c.want) {
			t.Errorf("%s %q: %d %s; want %d naming %q", c.path, c.body, st, b, c.status, c.want)
		}
	}
	// 1 GiB announced, nothing sent: the answer comes without the body.
	if st, b := d.rawPost("/v1/memgraph/plan", 1<<30, ""); st != http.StatusRequestEntityTooLarge || !strings.Contains(b, "16 MiB") {
		t.Errorf("huge body: %d %s", st, b)
	}
	var st api.Status
	d.ctlJSON(&st, "status")

	d.stop()
	out, errs, code = d.ctl("memgraph", "plan", graph, "--json")
	var fell api.MemPlan
	if code != 0 || !strings.Contains(errs, "planning offline") || json.Unmarshal([]byte(out), &fell) != nil || fell.Peak != offline.Peak {
		t.Fatalf("without quasimd: exit %d, stderr %q, out %.200s", code, errs, out)
	}
}

// TestMemgraphScheduleAndMisses: a graph whose first op runs the tuned
// reduce kernel gets that job's measured time from quasimd, and the plan
// answer carries the prefetch schedule of its host tensor and the cache
// miss estimate; quasimctl prints both; a prefetch option without a
// bandwidth is refused naming it.
func TestMemgraphScheduleAndMisses(t *testing.T) {
	t.Parallel()
	d := startServed(t)
	graph := filepath.Join(t.TempDir(), "g.json")
	body := `{"name":"pipe","ops":[{"id":"sum","kernel":"reduce","problem":"65536"},{"id":"scale","duration_ns":200000}],
"tensors":[{"id":"w","bytes":1048576,"host":true,"consumers":["sum"]},
{"id":"x","bytes":262144,"input":true,"consumers":["sum"]},
{"id":"y","bytes":4096,"producer":"sum","consumers":["scale"]},
{"id":"z","bytes":4096,"producer":"scale","output":true}]}`
	if err := os.WriteFile(graph, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var p api.MemPlan
	d.ctlJSON(&p, "memgraph", "plan", graph, "--cache", "32K/64/8,1M/64/16", "--bandwidth", "1G", "--latency", "10us")
	if p.DurationsFromStore != 1 || len(p.Schedule) == 0 || len(p.Misses) == 0 {
		t.Fatalf("plan %+v", p)
	}
	var sc struct {
		Makespan    int64 `json:"makespan_ns"`
		NoOverlap   int64 `json:"no_overlap_ns"`
		ComputeOnly int64 `json:"compute_only_ns"`
		Copies      []struct {
			Tensor string `json:"tensor"`
		} `json:"copies"`
	}
	if err := json.Unmarshal(p.Schedule, &sc); err != nil {
		t.Fatal(err)
	}
	// The reduce op's duration came from its served trial, so compute is
	// more than the 0.2 ms of the other op alone.
	if len(sc.Copies) != 1 || sc.Copies[0].Tensor != "w" || sc.ComputeOnly <= 200000 || sc.Makespan < sc.ComputeOnly || sc.Makespan > sc.NoOverlap {
		t.Fatalf("schedule %s", p.Schedule)
	}
	out, _, code := d.ctl("memgraph", "plan", graph, "--cache", "32K/64/8", "--bandwidth", "1G", "--layout")
	for _, want := range []string{"1 op durations from quasimd", "cache misses:", "layout for locality", "prefetch: 1 copies", "copy, then compute"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, no %q in\n%s", code, want, out)
		}
	}
	if status, msg := d.rawPost("/v1/memgraph/plan?cap=1M", len(body), body); status != 400 || !strings.Contains(msg, "give bandwidth too") {
		t.Fatalf("cap without bandwidth: %d %s", status, msg)
	}
	if status, msg := d.rawPost("/v1/memgraph/plan?cache=32K/64", len(body), body); status != 400 || !strings.Contains(msg, "SIZE/LINE/WAYS") {
		t.Fatalf("bad cache: %d %s", status, msg)
	}
	t.Logf("\n%s", out)
}
