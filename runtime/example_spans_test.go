package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/quasim/quasim/runtime"
)

// Record a pipeline's launches: b runs after a, on another stream. Here no
// quasimd listens, so the spans are counted as unsent instead of sent; the
// launches never waited for it.
func ExampleClient_Spans() {
	rt := runtime.New(runtime.Options{Socket: "/nonexistent/quasimd.sock"})
	rec, err := rt.Spans("infer", runtime.SpanOptions{Device: "cpu0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 { // three passes of the pipeline
		a := rec.Start("conv2d", "224,224", "s0")
		a.End() // after the launch and its wait
		b := rec.Start("reduce", "65536", "s1", a.ID())
		b.End()
		rec.NextIteration()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rec.Close(ctx)
	st := rec.Stats()
	fmt.Printf("ended %d, sent %d, unsent %d\n", st.Ended, st.Sent, st.Unsent)
	// Output: ended 6, sent 0, unsent 6
}
