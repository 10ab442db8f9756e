package causal

import "slices"

// syncCalls block the host until GPU work is done.
var syncCalls = map[string]bool{
	"cudaDeviceSynchronize": true, "cudaStreamSynchronize": true, "cudaEventSynchronize": true,
	"hipDeviceSynchronize": true, "hipStreamSynchronize": true, "hipEventSynchronize": true,
}

// copyCalls copy memory, and wait for the copy when it is synchronous.
var copyCalls = map[string]bool{"cudaMemcpy": true, "cudaMemcpyAsync": true, "hipMemcpy": true, "hipMemcpyAsync": true,
	"hipMemcpyWithStream": true}

func (s *slice) nameOr() string {
	if s == nil {
		return ""
	}
	return s.name
}

// gpuCats are the categories (lower case) of GPU work in Kineto traces.
var gpuCats = map[string]bool{"kernel": true, "gpu_memcpy": true, "gpu_memset": true, "memcpy": true, "memset": true}

// syncWaits makes each synchronising call wait for the last GPU span of
// every GPU stream that ended by the time the call returned, and trims the
// call to start at the latest of those ends. It runs on slices sorted by
// thread and start, before numbering.
//
// A call a cuda_sync record names (exact, by correlation id) waits for
// what the record says instead: an event's recorded work, its stream's.
func (im *importer) syncWaits(exact map[string][]*slice) []edge {
	gpu := map[string][]*slice{} // thread → its spans, by start (and so by end)
	var threads []string
	for _, s := range im.slices {
		if s.gpu {
			k := s.pid + "/" + s.tid
			if _, ok := gpu[k]; !ok {
				threads = append(threads, k)
			}
			gpu[k] = append(gpu[k], s)
		}
	}
	copies := map[string]*slice{} // a copy's GPU side, by correlation id
	for _, s := range im.slices {
		if s.gpu && s.corr != "" && copyCalls[im.launches[s.corr].nameOr()] {
			copies[s.corr] = s
		}
	}
	var waits []edge
	for _, s := range im.slices {
		if c := copies[s.corr]; s.launch && c != nil && c.end <= s.end && c.end > s.start {
			// A copy call that returns after its copy ends on the GPU
			// waited for it (a pageable or synchronous copy): it
			// follows its stream's work.
			waits = append(waits, edge{c, s})
			im.rep.Waits++
			s.start = min(max(s.start, c.end), s.end)
			continue
		}
		if !s.sync || s.gpu {
			continue
		}
		latest := s.start
		if on, ok := exact[s.corr]; ok && s.corr != "" {
			// A cuda_sync record names what it waited for.
			for _, g := range on {
				if g.end <= s.end {
					waits = append(waits, edge{g, s})
					latest = max(latest, g.end)
				}
			}
		} else {
			for _, k := range threads {
				th := gpu[k]
				if j := lastEnded(th, s.end); j >= 0 {
					waits = append(waits, edge{th[j], s})
					latest = max(latest, th[j].end)
				}
			}
		}
		if len(waits) > 0 && waits[len(waits)-1].to == s {
			im.rep.Waits++
		}
		s.start = latest
	}
	return waits
}

// lastEnded returns the index of the last slice of a stream's (sorted by
// start, so by end) that ends by t, or -1.
func lastEnded(th []*slice, t int64) int {
	j, _ := slices.BinarySearchFunc(th, t, func(g *slice, t int64) int {
		if g.end <= t {
			return -1
		}
		return 1
	})
	return j - 1
}
