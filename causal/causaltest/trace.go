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
	// Setup runs a "setup" kernel of 50 µs on each stream, 1 ms before
	// the first iteration, and a last, partial iteration of the first
	// stage alone after the others (a warm-up, a cut-off recording).
	Setup bool
}

// Latencies of the synthetic machine, in ns.
const (
	LaunchCall  = 4000 // a cudaLaunchKernel call
	LaunchEvery = 2000 // host time between two launch calls
	LaunchLat   = 3000 // from a launch call's end to its kernel's start, at the earliest
	EventLat    = 2000 // from an event's kernel end to a waiting kernel's start
	syncTail    = 2000 // a synchronize returns this long after the GPU is done
)

// Truth is what one iteration does on the synthetic machine (Trace.run),
// worked out by running it again with a kernel faster or a stage longer.
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
	if tr.Setup {
		streams := map[int]bool{}
		for _, s := range tr.Stages {
			if !streams[s.Stream] {
				streams[s.Stream] = true
				evs = append(evs, event{Name: "setup", Cat: "kernel", Ph: "X", Ts: us(host - 1_000_000), Dur: us(50_000), Pid: gpuPid, Tid: tid0 + s.Stream})
			}
		}
	}
	for it := range tr.Iters {
		durs := make([]int64, len(tr.Stages))
		for i, s := range tr.Stages {
			durs[i] = s.Dur
			if tr.Jitter > 0 {
				durs[i] = int64(math.Round(float64(s.Dur) * (1 + tr.Jitter*(2*tr.RNG.Float64()-1))))
			}
		}
		res.PerIteration = append(res.PerIteration, tr.truth(durs))
		m := tr.run(host, durs)
		ids := make([]int, len(tr.Stages))
		for i, s := range tr.Stages {
			if tr.Host {
				flow++
				ids[i] = flow
				evs = append(evs,
					event{Name: "cudaLaunchKernel", Cat: "cuda_runtime", Ph: "X", Ts: us(m.launch[i]), Dur: us(LaunchCall), Pid: hostPid, Tid: hostTid},
					event{Name: "ac2g", Cat: "ac2g", Ph: "s", Ts: us(m.launch[i] + 1000), Pid: hostPid, Tid: hostTid, ID: flow})
			}
			tid := tid0 + s.Stream
			evs = append(evs, event{Name: s.Kernel, Cat: "kernel", Ph: "X", Ts: us(m.start[i]), Dur: us(durs[i]), Pid: gpuPid, Tid: tid,
				Args: map[string]any{"stream": tid, "synthetic": true}})
			if tr.Host {
				evs = append(evs, event{Name: "ac2g", Cat: "ac2g", Ph: "f", Bp: "e", Ts: us(m.start[i]), Pid: gpuPid, Tid: tid, ID: ids[i]})
			}
			if tr.JoinFlows {
				for _, a := range s.After {
					flow++
					evs = append(evs,
						event{Name: "join", Cat: "event", Ph: "s", Ts: us(m.start[a]), Pid: gpuPid, Tid: tid0 + tr.Stages[a].Stream, ID: flow},
						event{Name: "join", Cat: "event", Ph: "f", Bp: "e", Ts: us(m.start[i]), Pid: gpuPid, Tid: tid, ID: flow})
				}
			}
		}
		if tr.Host {
			evs = append(evs, event{Name: "cudaDeviceSynchronize", Cat: "cuda_runtime", Ph: "X", Ts: us(m.syncFrom), Dur: us(m.done - m.syncFrom), Pid: hostPid, Tid: hostTid})
		}
		host = m.done
		if tr.Gap != nil {
			host += tr.Gap(it)
		}
	}
	if tr.Setup {
		s := tr.Stages[0]
		if tr.Host {
			evs = append(evs, event{Name: "cudaLaunchKernel", Cat: "cuda_runtime", Ph: "X", Ts: us(host), Dur: us(LaunchCall), Pid: hostPid, Tid: hostTid})
		}
		evs = append(evs, event{Name: s.Kernel, Cat: "kernel", Ph: "X", Ts: us(host + LaunchCall + LaunchLat), Dur: us(s.Dur), Pid: gpuPid, Tid: tid0 + s.Stream})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmpNum(a.Ts, b.Ts) })
	// One event a line, so a diff of the file reads.
	b := []byte(`{"otherData":{"source":"synthetic: causal/causaltest, not a recording"},"traceEvents":[`)
	for i, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			panic(err) // plain values: cannot fail
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, '\n'), line...)
	}
	b = append(b, "\n]}\n"...)
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

// machine is one iteration as the synthetic machine runs it.
type machine struct {
	launch     []int64 // launch call starts
	start, end []int64 // kernels
	first      int64   // the iteration's first event
	syncFrom   int64   // with Host: when the synchronize is called
	done       int64   // the iteration's last event's end
}

// run runs one iteration whose first launch is at host: each launch call
// follows the last, each kernel starts at the earliest after its launch
// (LaunchLat), its stream's previous kernel and the kernels it joins
// (EventLat), and the host synchronizes after its launches.
func (tr Trace) run(host int64, durs []int64) machine {
	n := len(tr.Stages)
	m := machine{launch: make([]int64, n), start: make([]int64, n), end: make([]int64, n), first: host}
	free := map[int]int64{}
	last := int64(math.MinInt64)
	for i, s := range tr.Stages {
		m.launch[i] = host
		host += LaunchCall + LaunchEvery
		st := max(free[s.Stream], m.launch[i]+LaunchCall+LaunchLat)
		for _, a := range s.After {
			st = max(st, m.end[a]+EventLat)
		}
		m.start[i], m.end[i] = st, st+durs[i]
		free[s.Stream] = m.end[i]
		last = max(last, m.end[i])
	}
	m.syncFrom, m.done = host, last
	if tr.Host {
		m.done = max(host, last+syncTail)
	} else {
		m.first = slices.Min(m.start)
	}
	return m
}

// truth works out one iteration's influence and slack on the synthetic
// machine: end-to-end time from the iteration's first event to its last,
// with each kernel 5% faster, and with each stage longer (slack by
// bisection: the most it may grow without the end-to-end time growing).
func (tr Trace) truth(durs []int64) Truth {
	e2e := func(d []int64) int64 { m := tr.run(0, d); return m.done - m.first }
	base := e2e(durs)
	out := Truth{EndToEnd: base, Influence: map[string]float64{}, Slack: map[string]int64{}}
	for i, s := range tr.Stages {
		lo, hi := int64(0), base // slack in [lo, hi)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			d := slices.Clone(durs)
			d[i] += mid
			if e2e(d) == base {
				lo = mid
			} else {
				hi = mid
			}
		}
		if v, ok := out.Slack[s.Kernel]; !ok || lo < v {
			out.Slack[s.Kernel] = lo
		}
		if _, ok := out.Influence[s.Kernel]; ok {
			continue
		}
		d := slices.Clone(durs)
		for j, t := range tr.Stages {
			if t.Kernel == s.Kernel {
				d[j] = int64(math.Round(float64(d[j]) * 0.95))
			}
		}
		out.Influence[s.Kernel] = float64(base-e2e(d)) / float64(base) / 0.05
	}
	return out
}

// ForkJoin is issue 27's pipeline: A (1,000 µs) then C (500 µs) on one
// stream, B (300 µs) on another beside A, C joining B, repeated 50 times
// with 3 ms of host time between iterations and no ProfilerStep markers.
// Per iteration A's influence is 2/3 and C's 1/3 (a little less: the
// launch and synchronize add 9 µs to each iteration), B's 0 with 700 µs of
// slack less the 6 µs by which B's launch follows A's.
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
// flows, with or without a setup and a partial last iteration.
func Random(rng *rand.Rand) Trace {
	n := 2 + rng.IntN(5)
	streams := 1 + rng.IntN(3)
	tr := Trace{Iters: 5 + rng.IntN(26), Host: rng.IntN(2) == 0, JoinFlows: rng.IntN(2) == 0, Jitter: 0.05, RNG: rng, Setup: rng.IntN(3) == 0}
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
