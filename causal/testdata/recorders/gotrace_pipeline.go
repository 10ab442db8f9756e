// A small pipeline of goroutines: two branches of different lengths joined by a reduce.
package main

import (
	"math"
	"os"
	"runtime/trace"
	"sync"
)

func work(n int) float64 {
	s := 0.0
	for i := range n {
		s += math.Sqrt(float64(i))
	}
	return s
}

func main() {
	f, _ := os.Create("trace.out")
	trace.Start(f)
	var total float64
	for range 3 {
		var wg sync.WaitGroup
		var a, b float64
		wg.Add(2)
		go func() { defer wg.Done(); a = work(3_000_000) }()
		go func() { defer wg.Done(); b = work(1_000_000) }()
		wg.Wait()
		total += work(500_000) + a + b
	}
	trace.Stop()
	f.Close()
	println(int(total) % 7)
}
