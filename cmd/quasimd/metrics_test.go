package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// /metrics on the socket parses with the Prometheus text parser and has
// quasimd's metrics; the hit rate counts lookups by match; --metrics-listen
// serves the same on TCP.
func TestMetrics(t *testing.T) {
	t.Parallel()
	// The idle gate is on (at a threshold no load reaches) so its load gauge is there.
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}), "--metrics-listen", "127.0.0.1:0", "--idle-cpu", "1")
	waitServed(t, d, "65536")
	for range 3 {
		d.ctl("config", "reduce", "--problem", "65536")
	}
	d.ctl("config", "reduce", "--problem", "70000")
	code, body := d.rawGet("/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	for _, name := range []string{
		"quasim_config_lookups_total", "quasim_cycles_total", "quasim_trials_total",
		"quasim_evaluation_duration_seconds", "quasim_job_seconds_since_tuned", "quasim_job_stale",
		"go_goroutines", "process_resident_memory_bytes", "quasim_cpu_load_others",
	} {
		if fams[name] == nil {
			t.Errorf("no %s in /metrics", name)
		}
	}
	counts := map[string]float64{}
	for _, m := range fams["quasim_config_lookups_total"].GetMetric() {
		counts[label(m, "match")] += m.GetCounter().GetValue()
	}
	if counts["exact"] < 3 || counts["nearest"] < 1 {
		t.Errorf("lookups by match %v, want at least 3 exact and 1 nearest", counts)
	}
	var ok float64
	for _, m := range fams["quasim_trials_total"].GetMetric() {
		if label(m, "status") == "ok" {
			ok += m.GetCounter().GetValue()
		}
	}
	if ok < 1 {
		t.Errorf("no ok trials counted")
	}
	// The same on TCP.
	addr := metricsAddr(t, d)
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	tcp, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(tcp), "quasim_config_lookups_total") {
		t.Errorf("GET /metrics on %s: %d", addr, resp.StatusCode)
	}
	if resp, err := c.Get("http://" + addr + "/v1/status"); err == nil {
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the metrics listener serves /v1/status: %d", resp.StatusCode)
		}
		resp.Body.Close()
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// quasimctl devices on this machine: the CPU with a device class and its
// features, energy said to be unavailable when no counter is readable, and
// plainly no NVIDIA driver where there is none.
func TestDevices(t *testing.T) {
	t.Parallel()
	d := start(t, newDir(t, map[string]string{"reduce.yaml": reduceSpec}))
	var devs api.Devices
	d.ctlJSON(&devs, "devices")
	if !strings.HasPrefix(devs.CPU.Class, "cpu/") || devs.CPU.Threads == 0 || devs.CPU.Features == nil {
		t.Errorf("cpu %+v", devs.CPU)
	}
	if !strings.HasPrefix(devs.CPU.Energy, "rapl: ") && !strings.HasPrefix(devs.CPU.Energy, "unavailable: ") {
		t.Errorf("energy %q", devs.CPU.Energy)
	}
	out, _, code := d.ctl("devices")
	if code != 0 || !strings.Contains(out, devs.CPU.Class) {
		t.Errorf("devices: exit %d\n%s", code, out)
	}
	if devs.NVIDIA.Unavailable != "" && !strings.Contains(out, devs.NVIDIA.Unavailable) {
		t.Errorf("devices does not say why there are no GPUs:\n%s", out)
	}
	// The lock file it names is the one the cycles flock.
	if devs.CPU.Lock == "" || !strings.Contains(out, devs.CPU.Lock) {
		t.Errorf("no lock file shown: %q\n%s", devs.CPU.Lock, out)
	}
	deadline := time.Now().Add(testload.Scale(60 * time.Second))
	for _, err := os.Stat(devs.CPU.Lock); err != nil; _, err = os.Stat(devs.CPU.Lock) {
		if time.Now().After(deadline) {
			t.Fatalf("no cycle locked %s: %v", devs.CPU.Lock, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("\n%s", out)
}
