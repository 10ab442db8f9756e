package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quasim/quasim/genome"
)

// OnMiss bounds the jobs tune_on_miss adds, so that a lookup by any local
// user cannot start tuning a problem far costlier than the ones the
// operator listed. Zero fields take the defaults, from the spec's problems.
type OnMiss struct {
	// MaxProblem is the largest size of each problem dim a miss may add a
	// job for (default: each dim's largest among the spec's problems).
	MaxProblem []int `json:"max_problem,omitempty"`
	// MaxVolume is the largest product of a problem's dims, a proxy for a
	// measurement's cost (default: the largest among the spec's problems).
	MaxVolume float64 `json:"max_volume,omitempty"`
}

func (o OnMiss) isZero() bool { return o.MaxProblem == nil && o.MaxVolume == 0 }

// MissBounds are the bounds a miss is checked against: OnMiss with the
// defaults filled in from the spec's problems. ok is false when there is
// nothing to bound by (no problems listed and no bounds given): then no
// miss adds a job.
func (s *Spec) MissBounds() (b OnMiss, ok bool) {
	b = OnMiss{MaxProblem: s.OnMiss.MaxProblem, MaxVolume: s.OnMiss.MaxVolume}
	if b.MaxProblem == nil && len(s.Problems) > 0 {
		b.MaxProblem = make([]int, len(s.Problems[0].Dims))
		for _, p := range s.Problems {
			for i, d := range p.Dims {
				if i < len(b.MaxProblem) {
					b.MaxProblem[i] = max(b.MaxProblem[i], d)
				}
			}
		}
	}
	if b.MaxVolume == 0 {
		for _, p := range s.Problems {
			b.MaxVolume = max(b.MaxVolume, volume(p.Dims))
		}
	}
	return b, b.MaxProblem != nil && b.MaxVolume > 0
}

// CheckMiss says whether a miss at dims may add a job: nil, or an error
// that names the bound it is over.
func (s *Spec) CheckMiss(dims []int) error {
	b, ok := s.MissBounds()
	if !ok {
		return fmt.Errorf("kernel %s lists no problems to bound tune_on_miss by; set on_miss.max_problem and on_miss.max_volume", s.Name)
	}
	if len(dims) != len(b.MaxProblem) {
		return fmt.Errorf("problem %s has %d dims, on_miss.max_problem %d", joinInts(dims), len(dims), len(b.MaxProblem))
	}
	for i, d := range dims {
		if d > b.MaxProblem[i] {
			name := strconv.Itoa(i)
			if i < len(s.ProblemDims) {
				name = s.ProblemDims[i]
			}
			return fmt.Errorf("problem %s: dim %s = %d is over on_miss.max_problem %s", joinInts(dims), name, d, joinInts(b.MaxProblem))
		}
	}
	if v := volume(dims); v > b.MaxVolume {
		return fmt.Errorf("problem %s: volume %.0f is over on_miss.max_volume %.0f", joinInts(dims), v, b.MaxVolume)
	}
	return nil
}

// volume is the product of dims, in float64 so that it cannot overflow.
func volume(dims []int) float64 {
	v := 1.0
	for _, d := range dims {
		v *= float64(d)
	}
	return v
}

func joinInts(x []int) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// decodeOnMiss reads on_miss: {max_problem: PROBLEM, max_volume: NUMBER}.
func (s *Spec) decodeOnMiss(d decoder, n *node) error {
	m, err := d.mapping("on_miss", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("on_miss", m, []string{"max_problem", "max_volume"}); err != nil {
		return err
	}
	if v := m.get("max_problem"); !v.isNull() {
		dims, err := d.problem("on_miss.max_problem", v)
		if err != nil {
			return err
		}
		want := len(s.ProblemDims)
		if want == 0 && len(s.Problems) > 0 {
			want = len(s.Problems[0].Dims)
		}
		if want > 0 && len(dims) != want {
			return d.errf("on_miss.max_problem", v, "%s has %d dims, want %d like the problems", joinInts(dims), len(dims), want)
		}
		s.OnMiss.MaxProblem = dims
	}
	if v := m.get("max_volume"); !v.isNull() {
		x, err := d.number("on_miss.max_volume", v)
		if err != nil {
			return err
		}
		if !(x >= 1) {
			return d.errf("on_miss.max_volume", v, "%s: want a product of dims, at least 1", genome.PyFloat(x))
		}
		s.OnMiss.MaxVolume = x
	}
	return nil
}
