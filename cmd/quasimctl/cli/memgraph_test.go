package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// TestMemgraphPlanFallsBackOffline: with no daemon at the socket, the
// plan is made here, the same as --offline, and stderr says so.
func TestMemgraphPlanFallsBackOffline(t *testing.T) {
	graph := "../../../memgraph/testdata/hand_landmark_full.json"
	sock := filepath.Join(t.TempDir(), "none.sock")
	out, errs, code := runCtx(context.Background(), "--socket", sock, "memgraph", "plan", graph, "--json")
	if code != 0 || !strings.Contains(errs, "planning offline") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var fell, off api.MemPlan
	if err := json.Unmarshal([]byte(out), &fell); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCtx(context.Background(), "--socket", sock, "memgraph", "plan", graph, "--json", "--offline")
	if code != 0 || errs != "" {
		t.Fatalf("--offline: exit %d, stderr %q", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &off); err != nil {
		t.Fatal(err)
	}
	if fell.Peak != off.Peak || fell.Peak != fell.LowerBound || fell.Tensors != 166 || len(off.Placements) != 166 {
		t.Fatalf("fallback %+v, offline %+v", fell, off)
	}
}

func TestMemgraphPlanSummary(t *testing.T) {
	out, _, code := runCtx(context.Background(), "memgraph", "plan", "../../../memgraph/testdata/hand_landmark_full.json", "--offline", "--top", "2")
	for _, want := range []string{
		"graph hand_landmark_full: 165 ops, 166 tensors, fixed order, planned offline",
		"lower bound        4018432 (3.83 MiB)  1.0000",
		"greedy by size     4315136 (4.12 MiB)  1.0738",
		"peak (search)      4018432 (3.83 MiB)  1.0000",
		"t107    3211264 (3.06 MiB)  0",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 11 {
		t.Errorf("%d lines, want 11 (two tensors):\n%s", n, out)
	}
}

func TestMemgraphPlanBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "g.json")
	os.WriteFile(bad, []byte(`{"ops":[{"id":"a"}],"tensors":[{"id":"x","bytes":8,"consumers":["a"]}]}`), 0o644)
	onnxBad := filepath.Join(dir, "m.onnx")
	os.WriteFile(onnxBad, []byte("\x3a\x05\x0a"), 0o644)
	for file, want := range map[string]string{
		bad:                      `g.json: invalid memory graph: tensor "x": no producer`,
		onnxBad:                  "m.onnx: onnx m: model: field 7: unexpected EOF",
		filepath.Join(dir, "no"): "no such file",
	} {
		_, errs, code := runCtx(context.Background(), "memgraph", "plan", file, "--offline")
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", file, code, errs, want)
		}
	}
}

// TestMemgraphPlanONNXDims: an .onnx file is read here, its symbolic
// dims given with --dim.
func TestMemgraphPlanONNXDims(t *testing.T) {
	// x [n, 4] float -> Relu -> y [n, 4], protowire-encoded by hand.
	const tiny = ":@\n\x12\n\x01x\x12\x01y\x1a\x04relu\"\x04ReluZ\x14\n\x01x\x12\x0f\n\r\b\x01\x12\t\n\x03\x12\x01n\n\x02\b\x04b\x14\n\x01y\x12\x0f\n\r\b\x01\x12\t\n\x03\x12\x01n\n\x02\b\x04"
	path := filepath.Join(t.TempDir(), "tiny.onnx")
	if err := os.WriteFile(path, []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCtx(context.Background(), "memgraph", "plan", path, "--offline", "--json", "--dim", "n=5")
	var p api.MemPlan
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Name != "tiny" || p.Placements[0].Bytes != 80 {
		t.Fatalf("exit %d, stderr %q, out %s", code, errs, out)
	}
	_, errs, code = runCtx(context.Background(), "memgraph", "plan", path, "--offline", "--dim", "n")
	if code != 2 || !strings.Contains(errs, `dim "n": want NAME=VALUE`) {
		t.Fatalf("bad --dim: exit %d, stderr %q", code, errs)
	}
}

// TestMemgraphPlanONNXIf: a model whose If branches read the graph input
// x (synthetic, memgraph/onnx's ifModel) plans with x alive through the
// If, and the plan passes the check against the model.
func TestMemgraphPlanONNXIf(t *testing.T) {
	const ifModel = "\b\b:\x8d\x02Z\x14\n\x01x\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\b\x80\x02Z\x0e\n\x04cond\x12\x06\n\x04\b\t\x12\x00\n\x14\n\x04cond\x12\x02c2\x1a\x03not\"\x03Not\n\xa4\x01\n\x02c2\x12\x01y\x1a\x02if\"\x02If*V\n\vthen_branch2G\n\x15\n\x01x\x12\x02t1\x1a\x06relu_t\"\x04Relu\n\x17\n\x02t1\n\x01x\x12\x02yt\x1a\x05add_t\"\x03Addb\x15\n\x02yt\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\b\x80\x02*;\n\velse_branch2,\n\x13\n\x01x\x12\x02ye\x1a\x05neg_e\"\x03Negb\x15\n\x02ye\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\b\x80\x02\n\x12\n\x01y\x12\x01z\x1a\x04relu\"\x04Relub\x14\n\x01z\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\b\x80\x02B\x02\x10\r"
	byName := planONNXOffline(t, writeModel(t, "if.onnx", ifModel))
	if x, arena := byName["x"], byName["if#subgraphs"]; x.Last < 1 || arena.Bytes != 2048 || arena.First != 1 {
		t.Fatalf("x %+v, if#subgraphs %+v: want x alive through the If (op 1), a 2 KiB branch arena there", x, arena)
	}
}

// TestMemgraphPlanONNXValue: an If on a sample rate (synthetic,
// memgraph/onnx's srModel, whose 8 kHz branch gives its output no shape)
// plans with --value sr=16000, only the branch taken; without a value it is
// refused naming the input to give; a malformed --value is a usage error.
func TestMemgraphPlanONNXValue(t *testing.T) {
	const srModel = "\b\b:\xff\x01Z\x14\n\x01x\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\x12\x01nZ\f\n\x02sr\x12\x06\n\x04\b\a\x12\x00*\r\x10\a8\x80}B\x06k16000\n\x1a\n\x02sr\n\x06k16000\x12\x01c\x1a\x02eq\"\x05Equal\n\x83\x01\n\x01c\x12\x01y\x1a\x02if\"\x02If*2\n\vthen_branch2#\n\x15\n\x01x\x12\x02yt\x1a\x06relu_t\"\x04Relub\n\n\x02yt\x12\x04\n\x02\b\x01*?\n\velse_branch20\n\"\n\x01x\x12\x02ye\x1a\x06cell_e\"\x04Cell:\vexample.comb\n\n\x02ye\x12\x04\n\x02\b\x01\n\x12\n\x01y\x12\x01z\x1a\x04relu\"\x04Relub\x14\n\x01z\x12\x0f\n\r\b\x01\x12\t\n\x02\b\x01\n\x03\x12\x01nB\x02\x10\r"
	path := writeModel(t, "sr.onnx", srModel)
	byName := planONNXOffline(t, path, "--dim", "n=512", "--value", "sr=16000")
	if y, arena := byName["y"], byName["if#subgraphs"]; y.Bytes != 2048 || arena.Bytes != 2048 {
		t.Fatalf("y %+v, if#subgraphs %+v: want 2 KiB each (the 16 kHz branch only)", y, arena)
	}
	_, errs, code := runCtx(context.Background(), "memgraph", "plan", path, "--offline", "--dim", "n=512")
	if code != 2 || !strings.Contains(errs, "graph input sr") || !strings.Contains(errs, "--value") {
		t.Fatalf("no --value: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runCtx(context.Background(), "memgraph", "plan", path, "--offline", "--dim", "n=512", "--value", "sr=16k")
	if code != 2 || !strings.Contains(errs, `value "sr=16k"`) {
		t.Fatalf("bad --value: exit %d, stderr %q", code, errs)
	}
}

// writeModel writes model into the test's temporary folder as name.
func writeModel(t *testing.T, name, model string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// planONNXOffline plans the model at path offline with args and returns
// the plan's placements by tensor.
func planONNXOffline(t *testing.T, path string, args ...string) map[string]api.MemPlacement {
	t.Helper()
	out, errs, code := runCtx(context.Background(), append([]string{"memgraph", "plan", path, "--offline", "--json"}, args...)...)
	var p api.MemPlan
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("exit %d, stderr %q, out %s", code, errs, out)
	}
	byName := map[string]api.MemPlacement{}
	for _, x := range p.Placements {
		byName[x.Tensor] = x
	}
	return byName
}
