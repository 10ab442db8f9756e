package evaluate

import "math"

// Ratio is how many times slower a baseline ran than a candidate, from
// paired rounds: each round measured both, one after the other, so that
// what loaded the machine in that round slowed both and cancels in its
// ratio.
type Ratio struct {
	Ratio  float64 // geometric mean over rounds of baseline/candidate
	Low    float64 // 95% confidence interval of Ratio
	High   float64
	Rounds int
}

// PairedRatio is the ratio of base[i]/cand[i] over rounds i (the medians
// of each round's measurement of the two), with a Student t 95% interval
// on the logarithms of the rounds' ratios. Rounds where either time is not
// positive are left out; with fewer than two the interval is the ratio
// itself.
func PairedRatio(base, cand []float64) Ratio {
	var logs []float64
	for i := range min(len(base), len(cand)) {
		if base[i] > 0 && cand[i] > 0 && !math.IsInf(base[i], 0) && !math.IsInf(cand[i], 0) {
			logs = append(logs, math.Log(base[i]/cand[i]))
		}
	}
	n := len(logs)
	if n == 0 {
		return Ratio{}
	}
	mean := 0.0
	for _, l := range logs {
		mean += l
	}
	mean /= float64(n)
	r := Ratio{Ratio: math.Exp(mean), Rounds: n}
	if n < 2 {
		r.Low, r.High = r.Ratio, r.Ratio
		return r
	}
	ss := 0.0
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	half := tQuantile975(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	r.Low, r.High = math.Exp(mean-half), math.Exp(mean+half)
	return r
}

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (df >= 1).
func tQuantile975(df int) float64 {
	table := [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[df-1]
	}
	return 1.96 + 2.4/float64(df) // within 0.002 of the exact value past 30
}
