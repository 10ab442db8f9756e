package tuner

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store/storetest"
)

// heldCheck is a strategy that notes every Ask and Tell made without the
// CPU's lock held.
type heldCheck struct {
	evolve.Strategy
	held    func() bool
	mu      sync.Mutex
	calls   int
	outside int
}

func (h *heldCheck) note() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if !h.held() {
		h.outside++
	}
}

func (h *heldCheck) Ask(n int) ([]genome.Config, error) { h.note(); return h.Strategy.Ask(n) }

func (h *heldCheck) Tell(rs []evolve.Result) error { h.note(); return h.Strategy.Tell(rs) }

// A search's own computing (Ask, Tell) holds the CPU's lock, so it never
// runs beside a measurement on the CPU.
func TestStrategyComputesUnderCPULock(t *testing.T) {
	const cpu = "cpu/test"
	var mu sync.Mutex
	locks := map[string]*sync.Mutex{}
	held := map[string]bool{}
	lock := func(_ context.Context, device string) (func(), error) {
		mu.Lock()
		l := locks[device]
		if l == nil {
			l = &sync.Mutex{}
			locks[device] = l
		}
		mu.Unlock()
		l.Lock()
		mu.Lock()
		held[device] = true
		mu.Unlock()
		return func() {
			mu.Lock()
			held[device] = false
			mu.Unlock()
			l.Unlock()
		}, nil
	}
	var h *heldCheck
	_, key, _ := ed25519.GenerateKey(nil)
	tn := New(Config{Store: storetest.New(t), Signer: key, Lock: lock, CPU: cpu,
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy {
			h = &heldCheck{Strategy: evolve.NewES(s, seed, evolve.ESOptions{}), held: func() bool {
				mu.Lock()
				defer mu.Unlock()
				return held[cpu]
			}}
			return h
		}})
	job := reduceJob(t)
	job.Key.Device = "gpu/other" // measured under another lock: the CPU's is the strategy's own
	if _, err := tn.Cycle(context.Background(), job, Budget{Evals: 9}, "api", 1, nil); err != nil {
		t.Fatal(err)
	}
	if h.calls == 0 || h.outside != 0 {
		t.Errorf("%d of %d Ask and Tell calls ran without the CPU's lock", h.outside, h.calls)
	}
}
