package schedules

import "math"

// surrogate is Gaussian-kernel ridge regression on relaxed coordinates:
// f(θ) = μ + σ·Σ α_i·exp(−|θ−x_i|²/2ℓ²), smooth and cheap to differentiate.
type surrogate struct {
	x     [][]float64
	alpha []float64
	mu    float64
	sigma float64
	inv2l float64 // 1/(2ℓ²)
	loo   float64 // leave-one-out RMSE, in loss units
}

// ridge is the noise term added to the kernel diagonal, relative to the
// standardised targets: measured times are noisy and ties are common.
const ridge = 1e-2

// fitSurrogate fits the points idx (coordinates by at, losses by y). The
// length scale is the median distance from the first point (the anchor) to
// the others, so the model adapts to how spread the neighbourhood is.
func fitSurrogate(dim int, idx []int, at func(int) []float64, y func(int) float64) *surrogate {
	n := len(idx)
	m := &surrogate{x: make([][]float64, n), alpha: make([]float64, n), sigma: 1}
	ys := make([]float64, n)
	for k, i := range idx {
		m.x[k] = at(i)
		ys[k] = y(i)
		m.mu += ys[k]
	}
	m.mu /= float64(n)
	v := 0.0
	for _, t := range ys {
		v += (t - m.mu) * (t - m.mu)
	}
	if n > 1 && v > 0 {
		m.sigma = math.Sqrt(v / float64(n))
	}
	var ds []float64
	for k := 1; k < n; k++ {
		ds = append(ds, math.Sqrt(sqDist(m.x[0], m.x[k])))
	}
	l := 0.25 * math.Sqrt(float64(max(dim, 1)))
	if len(ds) > 0 {
		l = max(median(ds), 1e-3)
	}
	m.inv2l = 1 / (2 * l * l)
	// Cholesky of K + ridge·I.
	L := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			s := math.Exp(-sqDist(m.x[i], m.x[j]) * m.inv2l)
			if i == j {
				s += ridge
			}
			for k := range j {
				s -= L[i*n+k] * L[j*n+k]
			}
			if i == j {
				L[i*n+i] = math.Sqrt(max(s, 1e-12))
			} else {
				L[i*n+j] = s / L[j*n+j]
			}
		}
	}
	b := make([]float64, n)
	for i := range n {
		b[i] = (ys[i] - m.mu) / m.sigma
	}
	m.alpha = cholSolve(L, n, b)
	// Leave-one-out residuals of kernel ridge: α_i / (K⁻¹)_ii.
	diag := make([]float64, n)
	e := make([]float64, n)
	for i := range n {
		clear(e)
		e[i] = 1
		diag[i] = cholSolve(L, n, e)[i]
	}
	for i := range n {
		r := m.alpha[i] / diag[i] * m.sigma
		m.loo += r * r
	}
	m.loo = math.Sqrt(m.loo / float64(n))
	return m
}

func cholSolve(L []float64, n int, b []float64) []float64 {
	z := make([]float64, n)
	for i := range n {
		s := b[i]
		for k := range i {
			s -= L[i*n+k] * z[k]
		}
		z[i] = s / L[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < n; k++ {
			s -= L[k*n+i] * z[k]
		}
		z[i] = s / L[i*n+i]
	}
	return z
}

// eval returns f(θ) and, when g is not nil, writes ∇f(θ) into it.
func (m *surrogate) eval(th, g []float64) float64 {
	for i := range g {
		g[i] = 0
	}
	f := 0.0
	for k, x := range m.x {
		w := m.alpha[k] * math.Exp(-sqDist(th, x)*m.inv2l)
		f += w
		if g != nil {
			for i := range g {
				g[i] -= w * 2 * m.inv2l * (th[i] - x[i])
			}
		}
	}
	for i := range g {
		g[i] *= m.sigma
	}
	return m.mu + m.sigma*f
}

func (m *surrogate) looRMSE() float64 { return m.loo }

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
