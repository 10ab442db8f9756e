package tuner

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/quasim/quasim/internal/store"
)

// Only a write the store refused is ErrStore (the daemon keeps the cycle's
// record to write later); an invalid or corrupt record is its own error.
func TestNotWritten(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("checkpoint: %w", syscall.ENOSPC), true},
		{fmt.Errorf("checkpoint: %w", store.ErrReadOnly), true},
		{fmt.Errorf("job: %w", store.ErrInvalid), false},
		{fmt.Errorf("cycle: %w", store.ErrCorrupt), false},
	}
	for _, tt := range tests {
		got := notWritten(tt.err)
		if errors.Is(got, ErrStore) != tt.want || !errors.Is(got, tt.err) {
			t.Errorf("notWritten(%v) = %v, ErrStore %v, want %v", tt.err, got, errors.Is(got, ErrStore), tt.want)
		}
	}
}
