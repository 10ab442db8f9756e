package causal

import (
	"cmp"
	"slices"
)

// cudaSyncCat is the category of the synchronisation records CUPTI
// writes beside the runtime calls that synchronise (PyTorch 2.3 and
// later, with CUDA sync events enabled): "Stream Wait Event" (a stream
// waits for an event recorded on another), "Event Sync", "Stream Sync"
// and "Context Sync" (the host waits). Each names its call by
// correlation id and, for an event, the cudaEventRecord call
// (wait_on_cuda_event_record_corr_id) and the stream it recorded
// (wait_on_stream). They are dependencies, never spans.
const cudaSyncCat = "cuda_sync"

// syncRec is one cuda_sync record.
type syncRec struct {
	ev         int
	kind       string // its name: Stream Wait Event, Event Sync, ...
	pid        string // the device's pid, as its GPU work's
	corr       string // the synchronising runtime call's correlation id
	stream     string // the waiting stream (Stream Wait Event, Stream Sync)
	waitStream string // the stream the awaited event was recorded on
	record     string // the cudaEventRecord call's correlation id
}

// knownID says whether an id field holds one ("-1" is CUPTI's none).
func knownID(id string) bool { return id != "" && id != "-1" }

// launched is one stream's GPU work that has its launch in the trace, in
// launch order (a stream runs its work in that order).
type launched struct {
	s      []*slice
	starts []int64 // each one's launch's start
}

// before returns the last work launched at or before t, or nil; after the
// first launched at or after t.
func (l launched) before(t int64) *slice {
	k, _ := slices.BinarySearch(l.starts, t+1)
	if k == 0 {
		return nil
	}
	return l.s[k-1]
}

func (l launched) after(t int64) *slice {
	k, _ := slices.BinarySearch(l.starts, t)
	if k == len(l.s) {
		return nil
	}
	return l.s[k]
}

// recorded returns the GPU work an event record captured: the kept GPU
// slice launched last, before the record call, on the stream it
// recorded (what cudaEventRecord marks), or nil.
func (im *importer) recorded(r syncRec, by map[string]launched) *slice {
	call := im.launches[r.record]
	if !knownID(r.record) || !knownID(r.waitStream) || call == nil {
		return nil
	}
	return by[r.pid+"/"+r.waitStream].before(call.start)
}

// cudaSyncs reads the cuda_sync records: it returns, by the correlation
// id of a host call that synchronised, the GPU work it waited for (an
// empty list: the event had no recorded work, so it waited for none),
// and the edges from an event's recorded work to the GPU work a stream
// launched next after waiting for it (Stream Wait Event). It runs on
// kept slices, before syncWaits.
func (im *importer) cudaSyncs() (map[string][]*slice, []edge) {
	if len(im.syncRecs) == 0 {
		return nil, nil
	}
	gpu := map[string][]*slice{} // device/stream → its GPU work, by start
	by := map[string]launched{}  // and that with a launch, by launch
	for _, s := range im.slices {
		if !s.gpu || s.dropped {
			continue
		}
		k := s.pid + "/" + s.tid
		gpu[k] = append(gpu[k], s)
		if l := im.launches[s.corr]; s.corr != "" && l != nil {
			b := by[k]
			b.s = append(b.s, s)
			by[k] = b
		}
	}
	for k, b := range by {
		slices.SortStableFunc(b.s, func(x, y *slice) int {
			return cmp.Compare(im.launches[x.corr].start, im.launches[y.corr].start)
		})
		b.starts = make([]int64, len(b.s))
		for j, s := range b.s {
			b.starts[j] = im.launches[s.corr].start
		}
		by[k] = b
	}
	hostWaits := map[string][]*slice{}
	var edges []edge
	for _, r := range im.syncRecs {
		switch r.kind {
		case "Event Sync":
			// The host waited for the recorded work only.
			if src := im.recorded(r, by); src != nil {
				hostWaits[r.corr] = []*slice{src}
			} else if knownID(r.corr) {
				hostWaits[r.corr] = []*slice{}
			}
		case "Stream Sync":
			// The host waited for its stream's work: the last that
			// ended by the call's return (syncWaits' rule, on that
			// stream only).
			call := im.launches[r.corr]
			if call == nil || !knownID(r.stream) {
				continue
			}
			th := gpu[r.pid+"/"+r.stream]
			hostWaits[r.corr] = []*slice{}
			if k := lastEnded(th, call.end); k >= 0 {
				hostWaits[r.corr] = []*slice{th[k]}
			}
		case "Stream Wait Event":
			// The stream's next work launched after the wait call
			// starts after the recorded work ends.
			src, call := im.recorded(r, by), im.launches[r.corr]
			if src == nil || call == nil || !knownID(r.stream) {
				continue
			}
			if dst := by[r.pid+"/"+r.stream].after(call.start); dst != nil && dst != src {
				edges = append(edges, edge{src, dst})
				im.rep.Waits++
			}
		}
	}
	return hostWaits, edges
}
