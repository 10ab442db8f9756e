package introspect

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestMeasureCeilings(t *testing.T) {
	caches := []Cache{{"L1", 1, 32 << 10, 1}, {"L2", 2, 1 << 20, 1}, {"L3", 3, 64 << 20, 2}}
	c, err := MeasureCeilings(context.Background(), CeilingOptions{Threads: 2, Time: 20 * time.Millisecond, Reps: 1, CopyBytes: 4 << 20, Caches: caches})
	if err != nil {
		t.Fatal(err)
	}
	if c.GFLOPS <= 0 || c.GFLOPSThread <= 0 || c.BandwidthGBs <= 0 || c.FMA == "" || c.How == "" {
		t.Fatalf("ceilings %+v", c)
	}
	// Each level's buffers: half its share per thread, source and
	// destination; L3's share is half of it (two threads), capped at
	// CopyBytes.
	if len(c.Levels) != 3 || c.Levels[0].BufferBytes != 8<<10 || c.Levels[1].BufferBytes != 256<<10 || c.Levels[2].BufferBytes != 4<<20 {
		t.Fatalf("levels %+v", c.Levels)
	}
	for _, l := range c.Levels {
		if l.BandwidthGBs <= 0 {
			t.Errorf("level %s: %v GB/s", l.Name, l.BandwidthGBs)
		}
	}
	t.Logf("%+v", c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasureCeilings(ctx, CeilingOptions{Threads: 1, Time: time.Millisecond, CopyBytes: 1 << 20}); err == nil {
		t.Fatal("a cancelled measurement gave no error")
	}
}

// TestFMALoopsAgree checks the loops compute what their count of FMAs
// says: after n iterations a lane is the sum of 12 accumulators, each n
// FMAs of (1+2^-23)^2, so 12n up to float32 rounding.
func TestFMALoopsAgree(t *testing.T) {
	_, _, loop := fmaKernel()
	for _, n := range []int64{1, 1000} {
		if got, want := float64(loop(n)), 12*float64(n); got < want || got > want*(1+1e-4) {
			t.Fatalf("%d iterations sum to %v, want about %v", n, got, want)
		}
	}
	_, _, s := scalarKernel()
	if got := s(1); got < 11.99 || got > 12.01 {
		t.Fatalf("scalar: %v", got)
	}
}

// BenchmarkCeilings reports this machine's roofs:
// go test ./introspect -run '^$' -bench Ceilings -benchtime 1x
func BenchmarkCeilings(b *testing.B) {
	for range b.N {
		caches, err := ReadCaches(os.DirFS("/"))
		if err != nil {
			b.Log(err)
		}
		c, err := MeasureCeilings(context.Background(), CeilingOptions{Threads: 2, Caches: caches})
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range c.Levels {
			b.ReportMetric(l.BandwidthGBs, l.Name+"-GB/s")
		}
		b.ReportMetric(c.GFLOPS, "GFLOP/s")
		b.ReportMetric(c.GFLOPSThread, "GFLOP/s/thread")
		b.ReportMetric(c.BandwidthGBs, "GB/s")
		b.Logf("%s", c.How)
	}
}
