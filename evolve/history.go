package evolve

import (
	"fmt"
	"math"
	"slices"

	"github.com/quasim/quasim/genome"
)

// History is the ordered record of what a strategy has asked and been told.
// Every strategy keeps one, so that all agree on what is known; its JSON
// form is part of each strategy's state. Call Init after decoding one.
type History struct {
	Told    []Result        `json:"told"`
	Pending []genome.Config `json:"pending,omitempty"` // asked, not yet told

	seen map[string]int // packed config -> index into Told, or -1 while pending
	buf  []byte
}

func pack(c genome.Config) string {
	b := make([]byte, 0, 2*len(c))
	for _, v := range c {
		b = append(b, byte(v), byte(v>>8))
	}
	return string(b)
}

// Init rebuilds the index of what is known from Told and Pending.
func (h *History) Init() {
	h.seen = make(map[string]int, len(h.Told)+len(h.Pending))
	for i, r := range h.Told {
		h.seen[pack(r.Config)] = i
	}
	for _, c := range h.Pending {
		if _, ok := h.seen[pack(c)]; !ok {
			h.seen[pack(c)] = -1
		}
	}
}

func (h *History) lookup(c genome.Config) (int, bool) {
	if h.seen == nil {
		h.Init()
	}
	h.buf = h.buf[:0]
	for _, v := range c {
		h.buf = append(h.buf, byte(v), byte(v>>8))
	}
	i, ok := h.seen[string(h.buf)]
	return i, ok
}

// Known reports whether c was asked or told. It does not allocate.
func (h *History) Known(c genome.Config) bool {
	_, ok := h.lookup(c)
	return ok
}

// Index is the position of c's result in Told, or -1.
func (h *History) Index(c genome.Config) int {
	if i, ok := h.lookup(c); ok {
		return i
	}
	return -1
}

// Seen is how many distinct configs were asked or told.
func (h *History) Seen() int {
	if h.seen == nil {
		h.Init()
	}
	return len(h.seen)
}

// Ask records c as asked.
func (h *History) Ask(c genome.Config) {
	if h.seen == nil {
		h.Init()
	}
	h.seen[pack(c)] = -1
	h.Pending = append(h.Pending, c.Clone())
}

// Tell records r, a failure when its value is not finite, and reports false
// for a config already told.
func (h *History) Tell(r Result) bool {
	if h.seen == nil {
		h.Init()
	}
	k := pack(r.Config)
	i, ok := h.seen[k]
	if ok && i >= 0 {
		return false
	}
	if ok {
		if j := slices.IndexFunc(h.Pending, r.Config.Equal); j >= 0 {
			h.Pending = slices.Delete(h.Pending, j, j+1)
		}
	}
	r.Config = r.Config.Clone()
	if !r.OK || math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
		r.OK, r.Value = false, 0
	}
	h.seen[k] = len(h.Told)
	h.Told = append(h.Told, r)
	return true
}

// Check reports, with ErrBadState, a told or pending config outside s.
func (h *History) Check(s *genome.Space) error {
	for i, t := range h.Told {
		if !s.InRange(t.Config) {
			return fmt.Errorf("%w: told[%d] not in space", ErrBadState, i)
		}
	}
	for i, c := range h.Pending {
		if !s.InRange(c) {
			return fmt.Errorf("%w: pending[%d] not in space", ErrBadState, i)
		}
	}
	return nil
}

// Withdraw takes back c, asked and not told: it is no longer known, so it
// may be asked again. It reports whether c was pending.
func (h *History) Withdraw(c genome.Config) bool {
	i, ok := h.lookup(c)
	if !ok || i >= 0 {
		return false
	}
	delete(h.seen, string(h.buf))
	if j := slices.IndexFunc(h.Pending, c.Equal); j >= 0 {
		h.Pending = slices.Delete(h.Pending, j, j+1)
	}
	return true
}
