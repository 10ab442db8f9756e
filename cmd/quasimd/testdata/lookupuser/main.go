// Command lookupuser is the Go runtime as an application links it, for
// TestRuntimesAsUser: run as an ordinary user with no socket given, it
// looks reduce up at 65536, reports a latency of the served config, and
// with -flood reports until the daemon rate-limits it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/runtime"
)

func main() {
	flood := flag.Int("flood", 0, "report up to this many times, until rate-limited")
	flag.Parse()
	ctx := context.Background()
	rt := runtime.New(runtime.Options{Timeout: 5 * time.Second})
	res := rt.Lookup(ctx, "reduce", []int{65536}, map[string]any{"block": 1})
	if res.Match != api.MatchExact || res.Certificate == "" {
		fail("lookup: %+v", res)
	}
	fmt.Printf("lookup: %s, certificate %s\n", res.Key, res.Certificate)
	if *flood > 0 {
		for i := range *flood {
			err := rt.Report(ctx, "reduce", []int{65536}, res.Key, []float64{0.5})
			if errors.Is(err, api.ErrRateLimited) {
				fmt.Printf("rate-limited after %d reports: %v\n", i, err)
				return
			}
			if err != nil {
				fail("report %d: %v", i, err)
			}
		}
		fail("%d reports, none rate-limited", *flood)
	}
	if err := rt.Report(ctx, "reduce", []int{65536}, res.Key, []float64{0.5, 0.6}); err != nil {
		fail("report: %v", err)
	}
	err := rt.Report(ctx, "reduce", []int{12345}, res.Key, []float64{0.5})
	if !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "12345") {
		fail("report for a job that does not exist: %v, want not found naming it", err)
	}
	fmt.Println("report: stored; unknown job:", err)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "lookupuser: "+format+"\n", a...)
	os.Exit(1)
}
