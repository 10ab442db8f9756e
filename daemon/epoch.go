package daemon

import (
	"sync"
	"sync/atomic"
)

// epoch counts changes to the served configs and kernels. Readers compare
// numbers; waiters get a channel closed at the next change.
type epoch struct {
	n  atomic.Uint64
	mu sync.Mutex
	ch chan struct{}
}

// Load returns the current number.
func (e *epoch) Load() uint64 { return e.n.Load() }

// Add bumps the number by d and wakes every waiter.
func (e *epoch) Add(d uint64) uint64 {
	v := e.n.Add(d)
	e.mu.Lock()
	if e.ch != nil {
		close(e.ch)
		e.ch = nil
	}
	e.mu.Unlock()
	return v
}

// Changed returns a channel closed at the next Add. Take it before reading
// what it guards, so that no change between the two goes unnoticed.
func (e *epoch) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(chan struct{})
	}
	return e.ch
}
