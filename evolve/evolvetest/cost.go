package evolvetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/quasim/quasim/evolve"
)

// MarginalCost runs the strategy f makes on bs for b.N runs of
// windows[len(windows)-1] evaluations, one Ask and Tell at a time, and
// reports its own time per evaluation (ms) in each window of the history:
// evaluations windows[w-1]+1 to windows[w].
func MarginalCost(b *testing.B, bs evolve.BenchSpace, f evolve.Factory, windows []int) {
	b.Helper()
	spent := make([]time.Duration, len(windows))
	for i := range b.N {
		st := f(bs.Space, uint64(i+1))
		for n := 1; n <= windows[len(windows)-1]; n++ {
			start := time.Now()
			cs, err := st.Ask(1)
			if err != nil || len(cs) != 1 {
				b.Fatalf("Ask at %d: %v, %v", n, cs, err)
			}
			own := time.Since(start)
			m, err := bs.Measure(cs[0])
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			if err := st.Tell([]evolve.Result{{Config: cs[0], OK: m.OK, Value: m.Time}}); err != nil {
				b.Fatal(err)
			}
			own += time.Since(start)
			for w := 1; w < len(windows); w++ {
				if n > windows[w-1] && n <= windows[w] {
					spent[w] += own
				}
			}
		}
	}
	for w := 1; w < len(windows); w++ {
		ms := float64(spent[w].Microseconds()) / 1000 / float64(b.N*(windows[w]-windows[w-1]))
		b.ReportMetric(ms, fmt.Sprintf("ms/eval_%d-%d", windows[w-1]+1, windows[w]))
	}
}
