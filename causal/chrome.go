package causal

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// ChromeReport says what ImportChrome mapped and what it dropped.
type ChromeReport struct {
	Events int `json:"events"` // trace events read
	Spans  int `json:"spans"`  // spans made
	Deps   int `json:"deps"`   // dependencies made from flows and waits
	// Waits counts synchronising calls tied to GPU work, and GPU work tied
	// to another stream's by a cuda_sync Stream Wait Event record.
	Waits      int `json:"waits"`
	Iterations int `json:"iterations"` // ProfilerStep#N markers seen, or iterations inferred
	// IterationsFrom says where the iterations came from: FromMarkers,
	// FromRepeats (inferred; RepeatingTracks of Tracks threads and streams
	// repeat their kernel sequence Iterations times) or FromNone.
	IterationsFrom  string `json:"iterations_from"`
	Tracks          int    `json:"tracks,omitempty"`
	RepeatingTracks int    `json:"repeating_tracks,omitempty"`
	// Gaps says how idle gaps on GPU streams were modelled.
	Gaps GapReport `json:"gaps"`
	// Bind says how GPU work was bound to steps (with markers).
	Bind BindReport `json:"bind"`
	// Steps describes each ProfilerStep#N, in time order.
	Steps []StepReport `json:"steps,omitempty"`
	// Coverage compares the GPU busy time inside the steps with the GPU
	// busy time in spans (with markers).
	Coverage Coverage `json:"coverage"`
	// GPUTracks are the devices and streams of the GPU work in spans
	// (kernels, copies, memsets): see GPUWork.
	GPUTracks []Track `json:"gpu_tracks,omitempty"`
	// Warning says what the figures mean when no iterations were found.
	Warning string `json:"warning,omitempty"`
	// CutOff is set when the array form ended early (allowed: a trace
	// still being written); a partial last event is not counted.
	CutOff  bool      `json:"cut_off,omitempty"`
	Dropped []Dropped `json:"dropped"` // by reason, most frequent first
}

// Dropped counts the events (or flows) dropped for one reason.
type Dropped struct {
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
	Example string `json:"example"` // the first one: its index and name
}

// slice is a complete event on one thread (pid, tid).
type slice struct {
	ev         int // index in traceEvents
	name       string
	pid, tid   string
	start, end int64
	problem    string
	bind       string // bind_id, when flow_in or flow_out
	in, out    bool
	iter       int // -1: none yet
	id         uint64
	dropped    bool
	gpu, sync  bool // GPU work; a call that waits for GPU work
	hostWait   bool // a gap before it is modelled as waiting for the host
	launch     bool // a runtime call (cuda_runtime, cuda_driver): may launch GPU work
	boundary   bool // a step's start or end (Span.Boundary)
	corr       string
}

type flowEvent struct {
	ev       int
	ph       string
	pid, tid string
	ts       int64
	next     bool // "f" without bp "e": binds to the next slice
}

type importer struct {
	rep     ChromeReport
	drops   map[string]int // reason → index in rep.Dropped
	slices  []*slice
	markers map[string][]marker // pid → ProfilerStep#N markers
	flows   map[string][]flowEvent
	open    map[string][]openB // pid/tid → stack of "B" events
	names   []string           // event index → name
	opt     ChromeOptions
	// launches are the runtime calls by correlation id, kept or not: a
	// kernel's step is its launch's.
	launches map[string]*slice
	// stepsEnd is the end of the last step's window (with markers): a
	// slice after it takes no step from its dependencies.
	stepsEnd int64
	gpuRaw   [][2]int64 // every GPU event read, kept or not
	syncRecs []syncRec  // cuda_sync records, in file order
	all      []*slice   // every slice made, kept or not (to say why none was)
}

type openB struct {
	ev int
	ts int64
	e  chromeEvent
}

type marker struct {
	start, end int64
	n          int
	pid, tid   string
}

var profilerStep = regexp.MustCompile(`^ProfilerStep#(\d{1,9})$`)

// ImportChrome reads a Chrome trace event file (JSON object with
// traceEvents, or the bare array form, even unterminated) and maps it to
// spans of pipeline. See ChromeReport for what it says back.
//
// Complete events ("X") and begin/end pairs ("B"/"E") become spans: kernel
// = name, device = pid, stream = tid, problem = args["Input Dims"] of the
// event, else of the innermost enclosing event that has them, else of its
// flow source (so a GPU kernel gets the dims of the op that launched it);
// only with ChromeOptions.InputDims does a span keep them as its Problem.
// Events nest on a CPU thread (an op encloses the ops and launches it
// calls); only the innermost are kept, since the model runs one span at a
// time per stream. Flow events ("s"/"t"/"f" with the same cat and id, bound
// to the enclosing slice, or the next one for an "f" without bp "e") and
// bind_id with flow_in/flow_out become dependencies; a GPU event depends on
// the runtime call with its correlation id (args.correlation: every kernel
// of a CUDA graph launch), and Kineto's launch flows are then not read.
// Profiler envelopes and annotations are never spans (see envelope).
//
// With ProfilerStep#N markers, a host span's step is the one whose window
// (its start to the next step's start on its process) it starts in; GPU
// work's is its launch's, else the window it starts in (BindReport), and
// spans in no step are dropped. Each step is described (StepReport): a
// GPU-bound one loses its host spans; each other gets boundary spans at
// its start and the next step's start, so it lasts its period.
//
// Most traces have no such markers (only code that calls the profiler's
// step() writes them). Then iterations are inferred from the kernel
// sequence that repeats on each stream and thread (see inferIterations);
// when none repeats, the report says so in Warning and the trace is one
// iteration. Within an iteration, an idle gap longer than MinGap on a GPU
// stream is not kept as fixed time: it is modelled as a wait on the span
// of another stream or host thread that ended last in it (a dependency),
// or, when none did, on a launch the trace does not show (HostWait).
// Report.Gaps counts each kind.
//
// A trace draws no arrow for a host call that waits for the GPU
// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize and
// the hip ones), so such a call is made to depend on the last GPU span (cat
// kernel, gpu_memcpy or gpu_memset) of every GPU stream that ended before
// the call returned, and it is trimmed to start when the latest of them
// ended: its wait then follows the GPU work instead of staying a recorded
// duration. Where the trace holds CUPTI's cuda_sync records (PyTorch 2.3
// and later, with CUDA sync events), they say exactly what was waited
// for, and are never spans: a Stream Wait Event makes the waiting
// stream's next work depend on the work the event recorded (the last
// launched on its stream before the cudaEventRecord call), an Event Sync
// or Stream Sync makes the host call wait for that work only (see
// cudaSyncs). Without them, a wait between GPU streams shows only as the
// idle gap it leaves (modelGaps). Not mapped: async ("b"/"e") events.
func ImportChrome(data []byte, pipeline string) ([]Span, ChromeReport, error) {
	return ImportChromeWith(data, pipeline, ChromeOptions{})
}

// ChromeOptions changes what ImportChrome makes of a trace.
type ChromeOptions struct {
	// InputDims keeps each span's input dims as its Problem, so a kernel
	// launched at several shapes on several streams is a row per shape
	// (SplitKernels). Off, rows are by kernel name: a launch call inherits
	// every op's dims, which would split it into a row per shape.
	InputDims bool
	// ToGPUEnd imports for the view that measures each step to its last
	// GPU op (SpreadOptions.End with ChromeReport.GPUWork): the GPU work
	// a step launched stays its own wherever it runs, with no
	// BindReport.Later moves, since the step's GPU work is done only
	// when that work is; work whose launch is not in the trace is the
	// step's whose runtime calls bracket its correlation id
	// (BindReport.ByOrder), else bound by time. Measured to their last
	// span instead, such steps would not last their period: use it with
	// that End.
	ToGPUEnd bool
}

// ImportChromeWith is ImportChrome with options.
func ImportChromeWith(data []byte, pipeline string, opt ChromeOptions) ([]Span, ChromeReport, error) {
	return ImportChromeFrom(bytes.NewReader(data), pipeline, opt)
}

// ImportChromeFrom is ImportChromeWith reading the trace from r as it
// goes, so the trace's text is never held whole (a trace of 87 MB of
// JSON needs that much less memory). An error reading r is the import's.
func ImportChromeFrom(r io.Reader, pipeline string, opt ChromeOptions) ([]Span, ChromeReport, error) {
	if pipeline == "" {
		return nil, ChromeReport{}, fmt.Errorf("%w: no pipeline name", ErrInvalidTrace)
	}
	im := &importer{drops: map[string]int{}, markers: map[string][]marker{},
		flows: map[string][]flowEvent{}, open: map[string][]openB{}, opt: opt, launches: map[string]*slice{}}
	cut, err := eachEvent(r, im.event)
	if err != nil {
		return nil, ChromeReport{}, err
	}
	im.rep.CutOff = cut
	im.rep.Events = len(im.names)
	var unended []int
	for _, stack := range im.open {
		for _, b := range stack {
			unended = append(unended, b.ev)
		}
	}
	slices.Sort(unended) // the first one is the report's example
	for _, ev := range unended {
		im.drop(ev, "begin (B) without end (E)")
	}
	im.keepInnermost()
	exact, streamWaits := im.cudaSyncs()
	waits := append(im.syncWaits(exact), streamWaits...)
	im.number()
	edges := im.bindFlows(waits)
	spans := im.spans(pipeline, edges)
	if len(spans) == 0 {
		return nil, im.rep, fmt.Errorf("%w: %s", ErrInvalidTrace, im.whyEmpty())
	}
	if len(spans) > MaxSpans {
		return nil, im.rep, fmt.Errorf("%w: %d spans, at most %d", ErrInvalidTrace, len(spans), MaxSpans)
	}
	slices.SortStableFunc(im.rep.Dropped, func(a, b Dropped) int { return b.Count - a.Count })
	return spans, im.rep, nil
}

func (im *importer) drop(ev int, reason string) {
	k, ok := im.drops[reason]
	if !ok {
		k = len(im.rep.Dropped)
		im.drops[reason] = k
		im.rep.Dropped = append(im.rep.Dropped, Dropped{Reason: reason,
			Example: fmt.Sprintf("event %d %q", ev, im.names[ev])})
	}
	im.rep.Dropped[k].Count++
}

func (im *importer) event(e *chromeEvent) {
	i := len(im.names)
	im.names = append(im.names, e.Name)
	switch e.Ph {
	case "X", "B", "E", "s", "t", "f":
	case "M":
		im.drop(i, "metadata event (M)")
		return
	case "i", "I", "R":
		im.drop(i, "instant event: no duration")
		return
	case "C":
		im.drop(i, "counter event (C)")
		return
	case "b", "e", "n", "S", "T", "F", "p":
		im.drop(i, "async event: not on one thread")
		return
	default:
		im.drop(i, fmt.Sprintf("phase %q is not mapped", e.Ph))
		return
	}
	ts, err := micros(e.Ts)
	if err != nil {
		im.drop(i, "ts: "+err.Error())
		return
	}
	pid, tid := string(e.Pid), string(e.Tid)
	switch e.Ph {
	case "X":
		if e.Dur == "" {
			im.drop(i, "complete event (X) without dur")
			return
		}
		dur, err := micros(e.Dur)
		if err != nil || dur < 0 || dur > MaxDuration || ts+dur >= MaxTime {
			im.drop(i, "dur: missing, negative or out of range")
			return
		}
		im.addSlice(i, e, pid, tid, ts, ts+dur)
	case "B":
		k := pid + "/" + tid
		im.open[k] = append(im.open[k], openB{i, ts, *e})
	case "E":
		k := pid + "/" + tid
		stack := im.open[k]
		if len(stack) == 0 {
			im.drop(i, "end (E) without begin (B)")
			return
		}
		b := stack[len(stack)-1]
		im.open[k] = stack[:len(stack)-1]
		if ts < b.ts || ts-b.ts > MaxDuration {
			im.drop(b.ev, "begin/end pair ends before it starts or lasts too long")
			return
		}
		im.addSlice(b.ev, &b.e, pid, tid, b.ts, ts)
	default:
		id := string(e.ID)
		if id == "" {
			id = string(e.ID2)
		}
		if id == "" {
			im.drop(i, "flow event without id")
			return
		}
		key := e.Cat + "\x00" + id
		im.flows[key] = append(im.flows[key], flowEvent{ev: i, ph: e.Ph, pid: pid, tid: tid, ts: ts,
			next: e.Ph == "f" && e.Bp != "e"})
	}
}

func (im *importer) addSlice(i int, e *chromeEvent, pid, tid string, start, end int64) {
	cat := strings.ToLower(e.Cat)
	if gpuCats[cat] {
		im.gpuRaw = append(im.gpuRaw, [2]int64{start, end})
	}
	if m := profilerStep.FindStringSubmatch(e.Name); m != nil && cat != gpuAnnotation {
		var n int
		fmt.Sscan(m[1], &n)
		im.markers[pid] = append(im.markers[pid], marker{start: start, end: end, n: n, pid: pid, tid: tid})
		im.rep.Iterations++
		return
	}
	if cat == cudaSyncCat {
		a := e.Args
		im.syncRecs = append(im.syncRecs, syncRec{ev: i, kind: e.Name, pid: pid, corr: string(a.Correlation),
			stream: string(a.Stream), waitStream: string(a.WaitOnStream), record: string(a.WaitOnRecord)})
		im.drop(i, "CUDA synchronization record (cuda_sync): read as a dependency, not work")
		return
	}
	if why := envelope(cat, e.Name); why != "" {
		im.drop(i, why)
		return
	}
	s := &slice{ev: i, name: e.Name, pid: pid, tid: tid, start: start, end: end, iter: -1,
		in: e.FlowIn, out: e.FlowOut, gpu: gpuCats[cat], sync: syncCalls[e.Name],
		launch: launchCats[cat], corr: string(e.Args.Correlation)}

	if s.in || s.out {
		s.bind = string(e.BindID)
	}
	if dims := e.Args.InputDims; len(dims) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, dims) == nil {
			s.problem = b.String()
		}
	}
	if e.Name == "" {
		im.drop(i, "event without name")
		return
	}
	if s.launch && s.corr != "" && im.launches[s.corr] == nil {
		im.launches[s.corr] = s
	}
	im.slices = append(im.slices, s)
	im.all = append(im.all, s)
}

// keepInnermost drops, on each thread, events that enclose others and
// events that overlap without nesting, so a thread runs one span at a time.
func (im *importer) keepInnermost() {
	slices.SortStableFunc(im.slices, func(a, b *slice) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid),
			cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	var stack []*slice
	for k, s := range im.slices {
		if k > 0 && (s.pid != im.slices[k-1].pid || s.tid != im.slices[k-1].tid) {
			stack = stack[:0]
		}
		for len(stack) > 0 && stack[len(stack)-1].end <= s.start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			switch {
			case s.start == top.start && s.end == top.end:
				s.dropped = true
				im.drop(s.ev, "same thread and time range as another event")
				continue
			case s.end > top.end:
				s.dropped = true
				im.drop(s.ev, "overlaps an event on its thread without nesting")
				continue
			case !top.dropped:
				top.dropped = true
				im.drop(top.ev, "encloses other events on its thread (they are kept)")
			}
			if s.problem == "" {
				s.problem = top.problem // a launch inherits its op's input dims
			}
		}
		stack = append(stack, s)
	}
	kept := im.slices[:0]
	for _, s := range im.slices {
		if !s.dropped {
			kept = append(kept, s)
		}
	}
	im.slices = kept
}

// number sorts the slices in span order (start, end, thread) and gives
// them their span ids in that order.
func (im *importer) number() {
	slices.SortStableFunc(im.slices, func(a, b *slice) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end),
			cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid))
	})
	for k, s := range im.slices {
		s.id = uint64(k + 1)
	}
}
