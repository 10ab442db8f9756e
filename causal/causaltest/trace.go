package causaltest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Stage is one kernel launch of an iteration.
type Stage struct {
	Kernel string
	Dur    int64 // ns
	Stream int   // GPU stream index
	After  []int // earlier stages of other streams it waits for (an event)
}

// Trace describes a synthetic trace.
type Trace struct {
	Stages []Stage
	Iters  int
	// Host adds the host thread: a cudaLaunchKernel per stage with its
	// ac2g flow to the kernel, and a cudaDeviceSynchronize at the end of
	// each iteration. Without it the trace holds GPU kernels only.
	Host bool
	// JoinFlows draws a flow for each After; without them the joins are
	// invisible in the trace.
	JoinFlows bool
	// Gap returns the host time between two iterations (after the
	// synchronize, or after the last kernel without Host), in ns.
	Gap func(iter int) int64
	// Jitter scales each duration by a factor in [1-Jitter, 1+Jitter].
	Jitter float64
	RNG    *rand.Rand // draws the jitter; nil when Jitter is 0
}

// Latencies of the synthetic machine, in ns.
const (
	LaunchCall  = 4000 // a cudaLaunchKernel call
	LaunchEvery = 2000 // launches follow one another this often... plus the call
	LaunchLat   = 3000 // from a launch call's end to its kernel's start, at the earliest
	EventLat    = 2000 // from an event's kernel end to a waiting kernel's start
	syncTail    = 2000 // a synchronize returns this long after the GPU is done
)

// Truth is the model's answer for one iteration's stage times: the
// dependency graph of the stages (program order on each stream and the
// joins) with no latencies.
type Truth struct {
	EndToEnd  int64
	Influence map[string]float64 // by kernel: end-to-end fraction saved per fraction saved at 5%
	Slack     map[string]int64   // by kernel: the least slack of its stages, ns
}

// Result is a trace and its truths.
type Result struct {
	JSON []byte
	// PerIteration is the truth of each iteration's stage times.
	PerIteration []Truth
	Kernels      []string // sorted
}

// Median returns the median over iterations of a kernel's influence and
// slack.
func (r Result) Median(kernel string) (influence float64, slack float64) {
	var in, sl []float64
	for _, t := range r.PerIteration {
		in = append(in, t.Influence[kernel])
		sl = append(sl, float64(t.Slack[kernel]))
	}
	return median(in), median(sl)
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	return (v[(n-1)/2] + v[n/2]) / 2
}

type event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   int            `json:"id,omitempty"`
	Bp   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// us writes ns as µs with three decimals, as Kineto does.
func us(ns int64) json.Number { return json.Number(fmt.Sprintf("%d.%03d", ns/1000, ns%1000)) }

const (
	hostPid, hostTid = 1, 1
	gpuPid, tid0     = 0, 7 // stream k is tid tid0+k
	epoch            = 1_700_000_000_000_000_000
)

// Make builds the trace and its truths.
func Make(tr Trace) Result {
	var evs []event
	flow := 0
	res := Result{}
	seen := map[string]bool{}
	for _, s := range tr.Stages {
		if !seen[s.Kernel] {
			seen[s.Kernel] = true
			res.Kernels = append(res.Kernels, s.Kernel)
		}
	}
	slices.Sort(res.Kernels)
	host := int64(epoch)
	streamFree := map[int]int64{}
	start := make([]int64, len(tr.Stages))
	end := make([]int64, len(tr.Stages))
	for it := range tr.Iters {
		durs := make([]int64, len(tr.Stages))
		for i, s := range tr.Stages {
			durs[i] = s.Dur
			if tr.Jitter > 0 {
				durs[i] = int64(math.Round(float64(s.Dur) * (1 + tr.Jitter*(2*tr.RNG.Float64()-1))))
			}
		}
		res.PerIteration = append(res.PerIteration, truth(tr.Stages, durs))
		launchEnd := make([]int64, len(tr.Stages))
		ids := make([]int, len(tr.Stages))
		for i := range tr.Stages {
			launchEnd[i] = host + LaunchCall
			if tr.Host {
				flow++
				ids[i] = flow
				evs = append(evs,
					event{Name: "cudaLaunchKernel", Cat: "cuda_runtime", Ph: "X", Ts: us(host), Dur: us(LaunchCall), Pid: hostPid, Tid: hostTid},
					event{Name: "ac2g", Cat: "ac2g", Ph: "s", Ts: us(host + 1000), Pid: hostPid, Tid: hostTid, ID: flow})
			}
			host += LaunchCall + LaunchEvery
		}
		last := int64(0)
		for i, s := range tr.Stages {
			st := max(streamFree[s.Stream], launchEnd[i]+LaunchLat)
			for _, a := range s.After {
				st = max(st, end[a]+EventLat)
			}
			start[i], end[i] = st, st+durs[i]
			streamFree[s.Stream] = end[i]
			last = max(last, end[i])
			tid := tid0 + s.Stream
			evs = append(evs, event{Name: s.Kernel, Cat: "kernel", Ph: "X", Ts: us(st), Dur: us(durs[i]), Pid: gpuPid, Tid: tid,
				Args: map[string]any{"stream": tid, "synthetic": true}})
			if tr.Host {
				evs = append(evs, event{Name: "ac2g", Cat: "ac2g", Ph: "f", Bp: "e", Ts: us(st), Pid: gpuPid, Tid: tid, ID: ids[i]})
			}
			if tr.JoinFlows {
				for _, a := range s.After {
					flow++
					evs = append(evs,
						event{Name: "join", Cat: "event", Ph: "s", Ts: us(start[a]), Pid: gpuPid, Tid: tid0 + tr.Stages[a].Stream, ID: flow},
						event{Name: "join", Cat: "event", Ph: "f", Bp: "e", Ts: us(st), Pid: gpuPid, Tid: tid, ID: flow})
				}
			}
		}
		if tr.Host {
			sync := max(host, last+syncTail)
			evs = append(evs, event{Name: "cudaDeviceSynchronize", Cat: "cuda_runtime", Ph: "X", Ts: us(host), Dur: us(sync - host), Pid: hostPid, Tid: hostTid})
			host = sync
		} else {
			host = max(host, last)
		}
		if tr.Gap != nil {
			host += tr.Gap(it)
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmpNum(a.Ts, b.Ts) })
	doc := struct {
		OtherData   map[string]string `json:"otherData"`
		TraceEvents []event           `json:"traceEvents"`
	}{map[string]string{"source": "synthetic: causal/causaltest, not a recording"}, evs}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err) // plain values: cannot fail
	}
	res.JSON = b
	return res
}

func cmpNum(a, b json.Number) int {
	x, _ := a.Float64()
	y, _ := b.Float64()
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// truth works out one iteration's influence and slack from its stage
// times: earliest starts forward in stage order, latest ends backward.
func truth(stages []Stage, durs []int64) Truth {
	n := len(stages)
	preds := make([][]int, n)
	prev := map[int]int{}
	for i, s := range stages {
		if j, ok := prev[s.Stream]; ok {
			preds[i] = append(preds[i], j)
		}
		prev[s.Stream] = i
		preds[i] = append(preds[i], s.After...)
	}
	longest := func(d []int64) ([]int64, int64) {
		end := make([]int64, n)
		var t int64
		for i := range n {
			var st int64
			for _, p := range preds[i] {
				st = max(st, end[p])
			}
			end[i] = st + d[i]
			t = max(t, end[i])
		}
		return end, t
	}
	end, base := longest(durs)
	out := Truth{EndToEnd: base, Influence: map[string]float64{}, Slack: map[string]int64{}}
	latest := make([]int64, n)
	for i := n - 1; i >= 0; i-- {
		latest[i] = base
		for c := i + 1; c < n; c++ {
			if slices.Contains(preds[c], i) {
				latest[i] = min(latest[i], latest[c]-durs[c])
			}
		}
	}
	for i, s := range stages {
		sl := latest[i] - end[i]
		if v, ok := out.Slack[s.Kernel]; !ok || sl < v {
			out.Slack[s.Kernel] = sl
		}
		if _, ok := out.Influence[s.Kernel]; ok {
			continue
		}
		d := slices.Clone(durs)
		for j, t := range stages {
			if t.Kernel == s.Kernel {
				d[j] = int64(math.Round(float64(d[j]) * 0.95))
			}
		}
		_, t := longest(d)
		out.Influence[s.Kernel] = float64(base-t) / float64(base) / 0.05
	}
	return out
}

// ForkJoin is issue 27's pipeline: A (1,000 µs) then C (500 µs) on one
// stream, B (300 µs) on another beside A, C joining B, repeated 50 times
// with 3 ms of host time between iterations and no ProfilerStep markers.
// Per iteration A's influence is 2/3, C's 1/3, B's 0 with 700 µs of slack
// (less the 6 µs B's launch comes after A's).
func ForkJoin() Trace {
	return Trace{
		Stages: []Stage{
			{Kernel: "A", Dur: 1_000_000, Stream: 0},
			{Kernel: "B", Dur: 300_000, Stream: 1},
			{Kernel: "C", Dur: 500_000, Stream: 0, After: []int{1}},
		},
		Iters: 50, Host: true, JoinFlows: true,
		Gap: func(int) int64 { return 3_000_000 },
	}
}

// Random draws a pipeline: 2 to 6 stages of distinct kernels taking 200 µs
// to 2 ms, on 1 to 3 streams, each joining earlier stages of other streams
// with probability 1/3, 5 to 30 iterations with 5% jitter and 0.1 to 5 ms
// of host time between them, with or without the host thread and the join
// flows.
func Random(rng *rand.Rand) Trace {
	n := 2 + rng.IntN(5)
	streams := 1 + rng.IntN(3)
	tr := Trace{Iters: 5 + rng.IntN(26), Host: rng.IntN(2) == 0, JoinFlows: rng.IntN(2) == 0, Jitter: 0.05, RNG: rng}
	gaps := make([]int64, tr.Iters)
	for i := range gaps {
		gaps[i] = 100_000 + rng.Int64N(4_900_000)
	}
	tr.Gap = func(it int) int64 { return gaps[it] }
	for i := range n {
		s := Stage{Kernel: fmt.Sprintf("k%d", i), Dur: 200_000 + rng.Int64N(1_800_000), Stream: rng.IntN(streams)}
		for j := range i {
			if tr.Stages[j].Stream != s.Stream && rng.IntN(3) == 0 {
				s.After = append(s.After, j)
			}
		}
		tr.Stages = append(tr.Stages, s)
	}
	return tr
}
