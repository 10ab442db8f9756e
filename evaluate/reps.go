package evaluate

import "time"

// Reps says how many runs a measurement makes: Warmup untimed runs, then
// timed runs until the 95% confidence interval of the median time is within
// ±RelCI of it, MaxTime of timed running has passed or Max runs were made,
// never fewer than Min. Every evaluator that times runs itself follows it,
// so a trial means the same whichever evaluator made it.
type Reps struct {
	Warmup  int           // untimed runs first (default 1; negative for none)
	Min     int           // at least this many timed runs (default 3)
	Max     int           // at most (default 50; raised to Min if below it)
	MaxTime time.Duration // stop after this much timed running (default 2s)
	RelCI   float64       // the CI half-width that is narrow enough, relative to the median (default 0.03)
}

// WithDefaults returns r with its zero fields set to their defaults, and a
// negative Warmup as 0.
func (r Reps) WithDefaults() Reps {
	switch {
	case r.Warmup == 0:
		r.Warmup = 1
	case r.Warmup < 0:
		r.Warmup = 0
	}
	if r.Min <= 0 {
		r.Min = 3
	}
	if r.Max <= 0 {
		r.Max = 50
	}
	r.Max = max(r.Max, r.Min)
	if r.MaxTime <= 0 {
		r.MaxTime = 2 * time.Second
	}
	if r.RelCI <= 0 {
		r.RelCI = 0.03
	}
	return r
}

// Enough reports whether the timed runs so far (ms each) end the
// measurement. r must have its defaults set.
func (r Reps) Enough(times []float64) bool {
	n := len(times)
	if n >= r.Max {
		return true
	}
	if n < r.Min {
		return false
	}
	if r.left(times) <= 0 {
		return true
	}
	m, half := MedianCI(times)
	return half <= r.RelCI*m
}

// Next is how many more timed runs to ask for at once of an evaluator that
// runs them in batches (a harness): up to Min at first, then as many as
// were made so far (doubling), within Max and the time left at the median
// rate; 0 when Enough.
func (r Reps) Next(times []float64) int {
	n := len(times)
	if r.Enough(times) {
		return 0
	}
	if n < r.Min {
		return r.Min - n
	}
	k := min(n, r.Max-n)
	if m := Median(times); m > 0 {
		k = min(k, max(1, int(r.left(times)/m)+1))
	}
	return max(1, k)
}

// left is the timed running MaxTime leaves after times, in ms.
func (r Reps) left(times []float64) float64 {
	left := float64(r.MaxTime) / float64(time.Millisecond)
	for _, t := range times {
		left -= t
	}
	return left
}

// RaceSlack is how much slower than the best so far a config must be, at the
// low end of its median's confidence interval, to stop being measured.
const RaceSlack = 1.25

// Outpaced reports whether times (ms) already show the config slower than
// RaceSlack × bestMS: Min runs made, and the 95% interval of their median
// wholly above that. Never with bestMS <= 0.
func (r Reps) Outpaced(times []float64, bestMS float64) bool {
	if !(bestMS > 0) || len(times) < max(r.Min, 3) {
		return false
	}
	m, half := MedianCI(times)
	return m-half > RaceSlack*bestMS
}
