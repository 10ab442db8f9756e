package causal

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Span is one kernel launch as a runtime saw it.
type Span struct {
	ID        uint64   `json:"id"`
	Pipeline  string   `json:"pipeline"`
	Iteration int      `json:"iteration,omitempty"`
	Kernel    string   `json:"kernel"`
	Problem   string   `json:"problem,omitempty"`
	Device    string   `json:"device,omitempty"`
	Stream    string   `json:"stream,omitempty"`
	Start     int64    `json:"start_ns"`
	End       int64    `json:"end_ns"`
	Deps      []uint64 `json:"deps,omitempty"`
	// HostWait says the span waited for the host (its launch came late,
	// and the trace does not show the launch): the model starts it no
	// earlier than its recorded start, however early its predecessors end.
	HostWait bool `json:"host_wait,omitempty"`
	// Boundary marks where its iteration starts or ends (a step's start,
	// the next step's start): it lasts 0 ns and is never a row, so the
	// iteration's end-to-end time is its period.
	Boundary bool `json:"boundary,omitempty"`
}

// Duration is End - Start in ns.
func (s Span) Duration() int64 { return s.End - s.Start }

const (
	// MaxSpans bounds one batch, so a decoder never builds an unbounded graph.
	MaxSpans = 1 << 22
	// MaxTime bounds |start| and |end| (ns; about 146 years), so a
	// difference of two times never overflows.
	MaxTime = 1 << 62
	// MaxDuration bounds one span (ns; about 4.9 hours) and Change.Duration.
	MaxDuration = 1 << 44
	// MaxScale bounds Change.Scale.
	MaxScale = 1000
)

// DecodeSpans reads a JSON array of spans (unknown fields are an error) and
// validates it.
func DecodeSpans(data []byte) ([]Span, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var spans []Span
	if err := dec.Decode(&spans); err != nil {
		return nil, fmt.Errorf("decode spans: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode spans: data after the array")
	}
	if len(spans) > MaxSpans {
		return nil, fmt.Errorf("decode spans: %d spans, at most %d in one batch", len(spans), MaxSpans)
	}
	if err := Validate(spans); err != nil {
		return nil, err
	}
	return spans, nil
}

// Validate checks a batch whole; the error names the first bad span's index
// and field. A valid batch builds a graph without error.
func Validate(spans []Span) error {
	_, err := Build(spans)
	return err
}

// checkFields checks what each span says about itself and its ids.
func checkFields(spans []Span) (map[uint64]int, error) {
	byID := make(map[uint64]int, len(spans))
	for i, s := range spans {
		switch {
		case s.ID == 0:
			return nil, spanErr(i, "id", "missing (ids start at 1)")
		case s.Pipeline == "":
			return nil, spanErr(i, "pipeline", "missing")
		case s.Pipeline != spans[0].Pipeline:
			return nil, spanErr(i, "pipeline", "%q, but span 0 is in %q (one pipeline per batch)", s.Pipeline, spans[0].Pipeline)
		case s.Kernel == "":
			return nil, spanErr(i, "kernel", "missing")
		case s.Iteration < 0:
			return nil, spanErr(i, "iteration", "%d is negative", s.Iteration)
		case s.Start <= -MaxTime || s.Start >= MaxTime:
			return nil, spanErr(i, "start_ns", "%d is outside ±2^62", s.Start)
		case s.End <= -MaxTime || s.End >= MaxTime:
			return nil, spanErr(i, "end_ns", "%d is outside ±2^62", s.End)
		case s.End < s.Start:
			return nil, spanErr(i, "end_ns", "ends before it starts (start %d, end %d)", s.Start, s.End)
		case s.Boundary && s.End != s.Start:
			return nil, spanErr(i, "end_ns", "a boundary lasts 0 ns (start %d, end %d)", s.Start, s.End)
		case s.End-s.Start > MaxDuration:
			return nil, spanErr(i, "end_ns", "lasts %d ns, more than 2^44", s.End-s.Start)
		}
		if j, dup := byID[s.ID]; dup {
			return nil, spanErr(i, "id", "%d is also span %d's", s.ID, j)
		}
		byID[s.ID] = i
	}
	for i, s := range spans {
		for k, d := range s.Deps {
			j, ok := byID[d]
			switch {
			case !ok:
				return nil, spanErr(i, fmt.Sprintf("deps[%d]", k), "unknown span id %d", d)
			case j == i:
				return nil, spanErr(i, fmt.Sprintf("deps[%d]", k), "depends on itself")
			}
		}
	}
	return byID, nil
}

// streamOrder returns the spans of each (device, stream) in program order:
// by start, then end, then batch order. It fails when two overlap.
func streamOrder(spans []Span) ([][]int32, error) {
	type track struct{ device, stream string }
	index := map[track]int{}
	var tracks [][]int32
	for i, s := range spans {
		k := track{s.Device, s.Stream}
		t, ok := index[k]
		if !ok {
			t = len(tracks)
			index[k] = t
			tracks = append(tracks, nil)
		}
		tracks[t] = append(tracks[t], int32(i))
	}
	for _, tr := range tracks {
		slices.SortStableFunc(tr, func(a, b int32) int {
			if c := cmp.Compare(spans[a].Start, spans[b].Start); c != 0 {
				return c
			}
			return cmp.Compare(spans[a].End, spans[b].End)
		})
		for k := 1; k < len(tr); k++ {
			p, s := spans[tr[k-1]], spans[tr[k]]
			if s.Start < p.End {
				return nil, spanErr(int(tr[k]), "start_ns", "overlaps span %d on device %q stream %q (%d < %d; a stream runs one span at a time)",
					tr[k-1], s.Device, s.Stream, s.Start, p.End)
			}
		}
	}
	return tracks, nil
}
