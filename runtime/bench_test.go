package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/quasim/quasim/runtime"
)

// BenchmarkLookupCached is the launch hot path: a repeat lookup answered
// from the in-process cache (target ≤ 100 ns).
func BenchmarkLookupCached(b *testing.B) {
	sock, _ := startDaemon(b)
	rt := runtime.New(runtime.Options{Socket: sock, TTL: time.Hour})
	ctx := context.Background()
	problem := []int{65536}
	if r := rt.Lookup(ctx, "reduce", problem, defaults); r.Reason != "" {
		b.Fatal(r.Reason)
	}
	b.ReportAllocs()
	for b.Loop() {
		rt.Lookup(ctx, "reduce", problem, defaults)
	}
}

// BenchmarkLookupCachedParallel is the same from every core at once.
func BenchmarkLookupCachedParallel(b *testing.B) {
	sock, _ := startDaemon(b)
	rt := runtime.New(runtime.Options{Socket: sock, TTL: time.Hour})
	ctx := context.Background()
	problem := []int{65536}
	rt.Lookup(ctx, "reduce", problem, defaults)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rt.Lookup(ctx, "reduce", problem, defaults)
		}
	})
}
