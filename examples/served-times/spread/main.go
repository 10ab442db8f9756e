// Command spread times one fixed, single-threaded CPU loop again and again
// and prints the medians of each window of 10 runs: the spread that two
// measurements of one config can have on this machine, whatever the
// measuring protocol. Run it beside the same busy loops as run.sh:
//
//	yes >/dev/null & yes >/dev/null & go run ./examples/served-times/spread; kill %1 %2
package main

import (
	"flag"
	"fmt"
	"slices"
	"time"
)

var sink float64

func loop(n int) {
	x := 0.0
	for i := range n {
		x += float64(i) * 1.0000001
	}
	sink += x
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func main() {
	n := flag.Int("n", 9_000_000, "iterations of the loop (about 7 ms on this 2-core EPYC when it has a core to itself)")
	windows := flag.Int("windows", 60, "windows of 10 runs")
	flag.Parse()
	var meds []float64
	for range *windows {
		var w []float64
		for range 10 {
			t0 := time.Now()
			loop(*n)
			w = append(w, float64(time.Since(t0))/float64(time.Millisecond))
		}
		meds = append(meds, median(w))
	}
	lo, hi := slices.Min(meds), slices.Max(meds)
	within := 0
	m := median(meds)
	for _, x := range meds {
		if x >= m/1.15 && x <= m*1.15 {
			within++
		}
	}
	fmt.Printf("%d windows of 10 runs: median of the windows' medians %.2f ms, lowest %.2f, highest %.2f (%.2fx); %d of %d within 15%% of the median\n",
		len(meds), m, lo, hi, hi/lo, within, len(meds))
}
