package memplan

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph/onnx"
)

func readTestdata(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPlanRealGraph(t *testing.T) {
	g, err := Read(readTestdata(t, "../../memgraph/testdata/hand_landmark_full.json"), JSON, "", onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(context.Background(), g, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Tensors != len(g.Tensors) || len(p.Placements) != p.Tensors || p.Peak < p.LowerBound || p.Stopped {
		t.Fatalf("plan %+v", p)
	}
	if p.Ratio != float64(p.Peak)/float64(p.LowerBound) || p.Peak > min(p.BySize, p.ByBreadth) {
		t.Fatalf("ratio %v peak %d bound %d baselines %d %d", p.Ratio, p.Peak, p.LowerBound, p.BySize, p.ByBreadth)
	}
	for i, pl := range p.Placements {
		if pl.Tensor != g.Tensors[i].ID || pl.Bytes != g.Tensors[i].Bytes || pl.Offset+pl.Bytes > p.Peak || pl.First > pl.Last {
			t.Fatalf("placement %d %+v", i, pl)
		}
	}
}

// TestPlanCancelled: a context already done stops the search at once and
// says so; the plan is the better baseline.
func TestPlanCancelled(t *testing.T) {
	g, err := Read(readTestdata(t, "../../memgraph/testdata/hand_landmark_full.json"), JSON, "", onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := Plan(ctx, g, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Stopped || p.Peak != min(p.BySize, p.ByBreadth) {
		t.Fatalf("stopped %v peak %d, baselines %d %d: want the baseline, stopped", p.Stopped, p.Peak, p.BySize, p.ByBreadth)
	}
}

func TestFormats(t *testing.T) {
	for path, want := range map[string]string{"a.onnx": ONNX, "b.TFLITE": TFLite, "c.json": JSON, "d": JSON} {
		if got := FormatOf(path); got != want {
			t.Errorf("FormatOf(%q) = %q, want %q", path, got, want)
		}
	}
	for _, c := range []struct{ format, want string }{
		{ONNX, "onnx m: model: field 15: unexpected EOF"},
		{TFLite, "tflite m: not a TensorFlow Lite file"},
		{JSON, "invalid memory graph: json"},
		{"yaml", `format "yaml": want json, onnx or tflite`},
	} {
		if _, err := Read([]byte("{}x"), c.format, "m", onnx.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.format, err, c.want)
		}
	}
}
