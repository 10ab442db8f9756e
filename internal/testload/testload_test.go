package testload

import (
	"testing"
	"time"
)

func TestFactor(t *testing.T) {
	f := Factor()
	if f < 1 || f > maxFactor {
		t.Fatalf("Factor() = %v, want within [1, %d]", f, maxFactor)
	}
	if Scale(time.Second) < time.Second {
		t.Errorf("Scale shrank a deadline")
	}
	t.Logf("load factor %.2f", f)
}
