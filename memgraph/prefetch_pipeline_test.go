package memgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A real pipeline that copies and computes: host weights are memmoved
// into device buffers by a copier goroutine, chunk by chunk, paced to a
// set bandwidth; the compute goroutine runs each op (a real reduction
// over its weight and its input activation) once its weights have
// arrived, and frees a weight's bytes after its last op. The copier
// follows the schedule's copy order and waits for the bytes under the
// cap as the schedule assumes, but the times are the machine's own.

const (
	pipeOps       = 16
	pipeBandwidth = 1 << 30 // bytes per second
	pipeChunk     = 256 << 10
	pipeAct       = 64 << 10
)

// pipeWork is op k's compute: reps passes over its weight and input,
// returning a checksum so nothing is optimised away.
func pipeWork(w, in []byte, reps int) uint64 {
	var s uint64
	for range reps {
		for i := 0; i+8 <= len(w); i += 64 {
			s += uint64(w[i]) ^ uint64(in[i%len(in)])
		}
	}
	return s
}

type pipeline struct {
	g       *Graph
	weights [][]byte // host copies, per op
	dev     [][]byte // device buffers, per op, touched once up front
	reps    []int
	latency int64 // measured fixed cost of a paced copy, ns
}

func newPipeline(rng *rand.Rand) *pipeline {
	p := &pipeline{g: &Graph{Name: "go-pipeline"}}
	for k := range pipeOps {
		p.g.Ops = append(p.g.Ops, Op{ID: "op" + strconv.Itoa(k)})
		w := make([]byte, (1+rng.IntN(6))<<20)
		for i := range w {
			w[i] = byte(rng.Uint32())
		}
		p.weights = append(p.weights, w)
		p.dev = append(p.dev, slices.Clone(w))
		p.reps = append(p.reps, 40+rng.IntN(160))
		p.g.Tensors = append(p.g.Tensors, Tensor{ID: "w" + strconv.Itoa(k), Bytes: int64(len(w)), Host: true, Consumers: []string{p.g.Ops[k].ID}})
		a := Tensor{ID: "a" + strconv.Itoa(k), Bytes: pipeAct}
		if k == 0 {
			a.Input = true
		} else {
			a.Producer = p.g.Ops[k-1].ID
		}
		a.Consumers = []string{p.g.Ops[k].ID}
		p.g.Tensors = append(p.g.Tensors, a)
	}
	return p
}

// paced copies weight k into its device buffer at pipeBandwidth.
func (p *pipeline) paced(k int) {
	dst, src := p.dev[k], p.weights[k]
	t0 := time.Now()
	for off := 0; off < len(dst); off += pipeChunk {
		end := min(off+pipeChunk, len(dst))
		copy(dst[off:end], src[off:end])
		time.Sleep(time.Until(t0.Add(time.Duration(int64(end) * 1e9 / pipeBandwidth))))
	}
}

// measure sets each op's duration to the fastest of a few solo runs,
// and the copy latency to the median excess of a solo paced copy over
// its bytes at pipeBandwidth: the inputs a daemon would have from trials.
func (p *pipeline) measure() {
	in := make([]byte, pipeAct)
	var excess []int64
	for k := range p.g.Ops {
		best := time.Duration(1 << 62)
		for range 5 {
			t0 := time.Now()
			// The result is kept as run keeps it: a discarded one let the
			// compiler drop most of the loop's work (solo times were a
			// quarter of the same op's in the pipeline).
			in[k] = byte(pipeWork(p.dev[k], in, p.reps[k]))
			best = min(best, time.Since(t0))
		}
		p.g.Ops[k].Duration = best.Nanoseconds()
		t0 := time.Now()
		p.paced(k)
		excess = append(excess, time.Since(t0).Nanoseconds()-int64(len(p.dev[k]))*1e9/pipeBandwidth)
	}
	slices.Sort(excess)
	p.latency = max(0, excess[len(excess)/2])
}

// observed is what one run measured: the makespan, each op's duration
// and each copy's excess over its bytes at pipeBandwidth.
type observed struct {
	makespan time.Duration
	opNS     []int64
	excess   []int64
}

// run executes the pipeline following schedule s (its copy order) and
// returns what it measured; serial copies all of an op's weights before
// running it, with no overlap.
func (p *pipeline) run(s *Schedule, capBytes int64, serial bool) observed {
	ob := observed{opNS: make([]int64, pipeOps), excess: make([]int64, pipeOps)}
	timedCopy := func(k int) {
		t0 := time.Now()
		p.paced(k)
		ob.excess[k] = time.Since(t0).Nanoseconds() - int64(len(p.dev[k]))*1e9/pipeBandwidth
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var held int64
	arrived := make([]chan struct{}, pipeOps)
	for k := range arrived {
		arrived[k] = make(chan struct{})
	}
	start := time.Now()
	if !serial {
		go func() {
			for _, c := range s.Copies {
				k, _ := strconv.Atoi(strings.TrimPrefix(c.Tensor, "w"))
				mu.Lock()
				for capBytes > 0 && held+c.Bytes > capBytes {
					cond.Wait()
				}
				held += c.Bytes
				mu.Unlock()
				timedCopy(k)
				close(arrived[k])
			}
		}()
	}
	in := make([]byte, pipeAct)
	for k := range pipeOps {
		if serial {
			timedCopy(k)
		} else {
			<-arrived[k]
		}
		t0 := time.Now()
		in[k] = byte(pipeWork(p.dev[k], in, p.reps[k]))
		ob.opNS[k] = time.Since(t0).Nanoseconds()
		mu.Lock()
		held -= int64(len(p.weights[k]))
		cond.Broadcast()
		mu.Unlock()
	}
	ob.makespan = time.Since(start)
	return ob
}

// replay predicts a run again from its own measured op and copy times:
// the error left is the schedule model's, not the inputs'.
func (p *pipeline) replay(t *testing.T, r *Result, capBytes int64, ob observed) float64 {
	g := *p.g
	g.Ops = slices.Clone(p.g.Ops)
	for k := range g.Ops {
		g.Ops[k].Duration = ob.opNS[k]
	}
	ex := slices.Clone(ob.excess)
	slices.Sort(ex)
	s, err := Prefetch(&g, r, PrefetchOptions{Bandwidth: pipeBandwidth, LatencyNS: max(0, ex[len(ex)/2]), Cap: capBytes})
	if err != nil {
		t.Fatal(err)
	}
	return float64(s.Makespan) / 1e6
}

// TestPrefetchGoPipeline prints predicted against measured makespans of
// the real pipeline (go test ./memgraph -run TestPrefetchGoPipeline -v):
// no pass/fail on times, which depend on the machine's load.
func TestPrefetchGoPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a timed pipeline for about a second")
	}
	p := newPipeline(rand.New(rand.NewPCG(21, 22)))
	p.measure()
	r, err := Plan(p.g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| cap (bytes) | compute only (ms) | predicted no overlap (ms) | measured no overlap (ms) | predicted prefetch (ms) | measured prefetch (ms) | error | predicted from the run's own times (ms) | error |\n|---|---|---|---|---|---|---|---|---|\n")
	var diag strings.Builder
	var most int64
	for _, w := range p.weights {
		most = max(most, int64(len(w)))
	}
	for _, capBytes := range []int64{0, 2*most + 2*pipeAct} {
		s, err := Prefetch(p.g, r, PrefetchOptions{Bandwidth: pipeBandwidth, LatencyNS: p.latency, Cap: capBytes})
		if err != nil {
			t.Fatal(err)
		}
		// The pipeline's byte budget holds weights only; the schedule's
		// cap also holds the (two) live activations.
		budget := int64(0)
		if capBytes > 0 {
			budget = capBytes - 2*pipeAct
		}
		// The fastest of three runs of each, as for the op durations.
		var serial, over observed
		for i := range 3 {
			if x := p.run(s, budget, true); i == 0 || x.makespan < serial.makespan {
				serial = x
			}
			if x := p.run(s, budget, false); i == 0 || x.makespan < over.makespan {
				over = x
			}
		}
		var solo, inRun, exRun int64
		for k := range p.g.Ops {
			solo += p.g.Ops[k].Duration
			inRun += serial.opNS[k]
			exRun += serial.excess[k]
		}
		fmt.Fprintf(&diag, "cap %d: ops %.2f ms solo, %.2f ms in the serial run; copies' excess over the bandwidth %.2f ms in that run (solo median %.3f ms each)\n",
			capBytes, float64(solo)/1e6, float64(inRun)/1e6, float64(exRun)/1e6, float64(p.latency)/1e6)
		got := float64(over.makespan.Nanoseconds()) / 1e6
		pred, again := float64(s.Makespan)/1e6, p.replay(t, r, capBytes, over)
		fmt.Fprintf(&b, "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %+.1f%% | %.2f | %+.1f%% |\n", capBytes, float64(s.ComputeOnly)/1e6,
			float64(s.NoOverlap)/1e6, float64(serial.makespan.Nanoseconds())/1e6, pred, got, 100*(pred-got)/got, again, 100*(again-got)/got)
	}
	t.Logf("copy latency %.3f ms (measured)\n%s%s", float64(p.latency)/1e6, diag.String(), b.String())
}
