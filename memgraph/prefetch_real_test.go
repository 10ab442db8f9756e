package memgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Model-derived costs for the mediapipe graphs (no trial times exist
// for them): an op takes costLaunchNS plus the bytes it reads and writes
// at costBytesPerNS (a memory-bound roofline, 20 GB/s); weights move at
// realBandwidth (PCIe 3.0 x16 in practice, 12 GB/s) with realLatencyNS
// per copy.
const (
	costLaunchNS   = 2000
	costBytesPerNS = 20
	realBandwidth  = 12e9
	realLatencyNS  = 10_000
)

// withHostWeights turns a mediapipe graph's weights into host tensors:
// the outputs of its DEQUANTIZE ops (builtin:6, which expand float16
// weights when the model runs, and read nothing the graph lists) become
// host tensors of the same bytes, and those ops go. Every op gets a
// model-derived duration (see costLaunchNS).
func withHostWeights(g *Graph) *Graph {
	out := &Graph{Name: g.Name, Source: g.Source, Order: g.Order, Alignment: g.Alignment}
	consumed := map[string]bool{}
	for _, t := range g.Tensors {
		for _, q := range t.Consumers {
			consumed[q] = true
		}
	}
	drop := map[string]bool{}
	for _, op := range g.Ops {
		if op.Kind == "builtin:6" && !consumed[op.ID] {
			drop[op.ID] = true
			continue
		}
		out.Ops = append(out.Ops, op)
	}
	touched := map[string]int64{}
	for _, t := range g.Tensors {
		t.Consumers = slices.Clone(t.Consumers)
		if drop[t.Producer] {
			t.Producer, t.Host = "", true
		}
		out.Tensors = append(out.Tensors, t)
		if t.Producer != "" {
			touched[t.Producer] += t.Bytes
		}
		for _, q := range t.Consumers {
			touched[q] += t.Bytes
		}
	}
	for k := range out.Ops {
		out.Ops[k].Duration = costLaunchNS + touched[out.Ops[k].ID]/costBytesPerNS
	}
	return out
}

// withSyntheticWeights gives each op of synthGraph a host weight tensor
// (64 KiB to 4 MiB, uniform) and a duration of 20 to 500 µs, uniform.
func withSyntheticWeights(rng *rand.Rand, g *Graph) *Graph {
	for k := range g.Ops {
		g.Ops[k].Duration = 20_000 + rng.Int64N(480_000)
		g.Tensors = append(g.Tensors, Tensor{ID: "w" + strconv.Itoa(k), Bytes: 65536 * (1 + rng.Int64N(64)), Host: true, Consumers: []string{g.Ops[k].ID}})
	}
	return g
}

// minCap is the least cap Prefetch accepts: the most bytes one op needs
// with only its own host tensors copied in.
func minCap(t *testing.T, g *Graph, r *Result) int64 {
	c, err := compile(g)
	if err != nil {
		t.Fatal(err)
	}
	m := newPrefetchModel(g, c, r)
	var need int64
	for k := range m.act {
		x := m.act[k]
		for _, h := range m.hostAt[k] {
			x += c.size[h]
		}
		need = max(need, x)
	}
	return need
}

// TestPrefetchNetworks prints docs/kernel-authors/memgraph.md's prefetch table (go test
// ./memgraph -run TestPrefetchNetworks -v): predicted makespan against
// copying then computing serially and against the ops alone, on real
// mediapipe graphs with model-derived costs and on synthetic graphs,
// without a cap, with twice the least cap, and with the least cap.
func TestPrefetchNetworks(t *testing.T) {
	graphs := loadReal(t)
	type row struct {
		label string
		g     *Graph
		bw    int64
	}
	var rows []row
	for _, name := range []string{"selfie_segmentation", "face_detection_full_range", "hand_landmark_full", "pose_landmark_heavy"} {
		rows = append(rows, row{name + " (model-derived costs)", withHostWeights(graphs[name]), realBandwidth})
	}
	// The same network over a link slow enough to bound it.
	rows = append(rows, row{"pose_landmark_heavy (model-derived costs)", withHostWeights(graphs["pose_landmark_heavy"]), 2e9})
	for seed := range uint64(2) {
		rng := rand.New(rand.NewPCG(seed, 77))
		rows = append(rows, row{fmt.Sprintf("synthetic-1000 seed %d (synthetic)", seed), withSyntheticWeights(rng, synthGraph(rng, 1000)), realBandwidth})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| graph | GB/s | host bytes | cap (bytes) | copies (recopies) | compute only (ms) | copy stream busy (ms) | no overlap (ms) | prefetch (ms) | prefetch / compute only | peak bytes |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rw := range rows {
		r, err := Plan(rw.g, Options{})
		if err != nil {
			t.Fatalf("%s: %v", rw.label, err)
		}
		var host int64
		for _, x := range rw.g.Tensors {
			if x.Host {
				host += x.Bytes
			}
		}
		least := minCap(t, rw.g, r)
		for _, cp := range []struct {
			name string
			cap  int64
		}{{"none", 0}, {"2 x least", 2 * least}, {"least", least}} {
			s, err := Prefetch(rw.g, r, PrefetchOptions{Bandwidth: rw.bw, LatencyNS: realLatencyNS, Cap: cp.cap})
			if err != nil {
				t.Fatalf("%s: %v", rw.label, err)
			}
			capText := cp.name
			if cp.cap > 0 {
				capText = fmt.Sprintf("%s (%d)", cp.name, cp.cap)
			}
			fmt.Fprintf(&b, "| %s | %g | %d | %s | %d (%d) | %.3f | %.3f | %.3f | %.3f | %.3f | %d |\n", rw.label, float64(rw.bw)/1e9, host, capText, len(s.Copies), s.Recopies,
				float64(s.ComputeOnly)/1e6, float64(s.CopyTime)/1e6, float64(s.NoOverlap)/1e6, float64(s.Makespan)/1e6, float64(s.Makespan)/float64(s.ComputeOnly), s.PeakBytes)
		}
	}
	t.Log("\n" + b.String())
}
