package genome

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// sharedT1 returns the space of a shipped T1 kernel, skipping without the
// shared folder.
func sharedT1(t testing.TB, kernel string) *Space {
	t.Helper()
	return t1Space(t, filepath.Join(sharedSpaces(t), "kernels", kernel+"_milo.T1.json"))
}

func t1Space(t testing.TB, path string) *Space {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := ParseT1(filepath.Base(path), data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := t1.Space()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTreeRanksMatchAll checks the count and every rank of the tree against
// enumeration: the config of rank r is All()[r].
func TestTreeRanksMatchAll(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	spaces := map[string]*Space{"small": smallSpace(t)}
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "spaces")); err == nil {
		for _, k := range []string{"convolution", "dedispersion", "gemm"} {
			spaces[k] = sharedT1(t, k)
		}
	}
	for name, s := range spaces {
		tr, err := newTree(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all := s.enumerate()
		if tr.total != uint64(len(all)) {
			t.Fatalf("%s: tree counts %d, enumeration %d", name, tr.total, len(all))
		}
		for r, want := range all {
			if got := tr.nth(uint64(r)); !got.Equal(want) {
				t.Fatalf("%s: rank %d = %v, want %v", name, r, got, want)
			}
		}
		t.Logf("%s: %d valid, %d tree states", name, tr.total, tr.states)
	}
}

// chiSquare returns the statistic of counts against a uniform expectation
// over n cells, and its normal score (χ² − dof)/√(2·dof).
func chiSquare(counts map[string]int, n, draws int) (float64, float64) {
	exp := float64(draws) / float64(n)
	chi := float64(n-len(counts)) * exp // cells never hit
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	dof := float64(n - 1)
	return chi, (chi - dof) / math.Sqrt(2*dof)
}

// TestTreeSampleUniform is the chi-square test of the tree sampler on the
// convolution space (4,362 valid configs), small enough to enumerate. The
// same test of a sampler that picks uniformly among the values each
// parameter admits (a tree walk without counts) must fail it, so the test
// can tell.
func TestTreeSampleUniform(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	s := sharedT1(t, "convolution")
	tr, err := newTree(s)
	if err != nil {
		t.Fatal(err)
	}
	n := int(tr.total)
	draws := 30 * n
	rng := rand.New(rand.NewPCG(7, 11))
	counts := map[string]int{}
	for range draws {
		c, err := s.sampleLarge(rng)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Valid(c) {
			t.Fatalf("sample %v is not valid", c)
		}
		counts[s.Key(c)]++
	}
	chi, z := chiSquare(counts, n, draws)
	t.Logf("tree sampler: chi-square %.0f on %d dof, z = %.2f", chi, n-1, z)
	if z > 4 {
		t.Errorf("tree sampler: chi-square %.0f on %d dof (z = %.1f): not uniform", chi, n-1, z)
	}
	// The control: walk the tree choosing among admitted values with equal
	// weight, ignoring the counts.
	counts = map[string]int{}
	for range draws {
		cur := make(Config, s.Len())
		env := s.env(s.Default())
		for d := range s.Len() {
			var ok []int
			for j := range s.params[d].Values {
				if tr.admits(d, j, cur, env) && tr.completions(d+1, cur) > 0 {
					ok = append(ok, j)
				}
			}
			j := ok[rng.IntN(len(ok))]
			tr.admits(d, j, cur, env)
		}
		counts[s.Key(cur)]++
	}
	_, zc := chiSquare(counts, n, draws)
	if zc <= 4 {
		t.Errorf("uncounted walk: z = %.1f, the test cannot tell it from uniform", zc)
	}
}

// TestNearestTreeMatchesListed checks the branch and bound against a scan
// of All on a space small enough to list: the same least distance for
// repairs of random combinations and for a search that rules values out.
func TestNearestTreeMatchesListed(t *testing.T) {
	s := sharedT1(t, "gemm")
	rng := rand.New(rand.NewPCG(3, 4))
	n := 200
	if testing.Short() {
		n = 40 // CI's race pass
	}
	for range n {
		c := make(Config, s.Len())
		for i, p := range s.params {
			c[i] = rng.IntN(len(p.Values))
		}
		cost := s.DistanceCost(c)
		// Rule out the first value of the first mutable parameter, and
		// accept only configs whose last mutable parameter is not 0.
		cost2 := func(i, j int) float64 {
			if i == 1 && j == 0 {
				return math.Inf(1)
			}
			return cost(i, j)
		}
		accept := func(v Config) bool { return v[14] != 0 }
		for _, tc := range []struct {
			cost   func(i, j int) float64
			accept func(Config) bool
		}{{cost, nil}, {cost2, accept}} {
			want, ok1 := s.nearestListed(nil, tc.cost, tc.accept)
			got, ok2 := s.nearestTree(rng, tc.cost, tc.accept)
			if ok1 != ok2 {
				t.Fatalf("found: listed %v, tree %v", ok1, ok2)
			}
			if !s.Valid(got) || (tc.accept != nil && !tc.accept(got)) {
				t.Fatalf("tree result %v not valid or not accepted", got)
			}
			dist := func(v Config) float64 {
				d := 0.0
				for i, j := range v {
					d += tc.cost(i, j)
				}
				return d
			}
			if math.Abs(dist(got)-dist(want)) > 1e-12 {
				t.Fatalf("nearest of %v: tree %v at %v, listed %v at %v", c, got, dist(got), want, dist(want))
			}
		}
	}
}

// largeGemm is the gemm_milo space with each tile and vector width list
// continued by doubling (scale_t1.py's rule, --grow 4): 1.7e11 raw
// combinations.
func largeGemm(t testing.TB) *Space {
	s := sharedT1(t, "gemm")
	params := slices.Clone(s.Params())
	for i, p := range params {
		if len(p.Values) < 2 || p.Values[len(p.Values)-1].I == 1 {
			continue // fixed values and 0/1 flags stay
		}
		vals := slices.Clone(p.Values)
		for len(vals) < 4*len(p.Values) {
			vals = append(vals, Int(2*vals[len(vals)-1].I))
		}
		params[i].Values = vals
	}
	big, err := NewSpace(params, SpaceOptions{Constraints: s.Constraints()})
	if err != nil {
		t.Fatal(err)
	}
	return big
}

// TestLargeSpaceWithoutEnumeration samples, repairs and mutates on a space
// of over 10^8 valid configs, which All could not hold.
func TestLargeSpaceWithoutEnumeration(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	s := largeGemm(t)
	start := time.Now()
	n, ok := s.Count()
	took := time.Since(start)
	if !ok {
		t.Fatal("large gemm space: not countable")
	}
	t.Logf("large gemm: %.3g raw, %d valid, counted in %v", s.RawSize(), n, took)
	if n < 1e8 || s.Enumerable() {
		t.Fatalf("large gemm: %d valid, enumerable %v; want >= 1e8, not enumerable", n, s.Enumerable())
	}
	if s.Size() != int(n) {
		t.Fatalf("Size() = %d, Count() = %d", s.Size(), n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		c, err := s.Sample(rng)
		if err != nil || !s.Valid(c) {
			t.Fatalf("Sample: %v, %v", c, err)
		}
		m, err := s.Mutate(rng, c, 0.3, 0.2)
		if err != nil || !s.Valid(m) {
			t.Fatalf("Mutate: %v, %v", m, err)
		}
		d, _ := s.Sample(rng)
		x, err := s.Crossover(rng, c, d)
		if err != nil || !s.Valid(x) {
			t.Fatalf("Crossover: %v, %v", x, err)
		}
	}
	if s.all != nil {
		t.Fatal("the large space was enumerated")
	}
}

// TestScaledT1 counts the files genome/testdata/scale_t1.py writes, when
// QUASIM_LARGE_T1 names their folder.
func TestScaledT1(t *testing.T) {
	dir := os.Getenv("QUASIM_LARGE_T1")
	if dir == "" {
		t.Skip("skipping: QUASIM_LARGE_T1 is not set (see genome/testdata/scale_t1.py)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.T1.json"))
	for _, f := range files {
		s := t1Space(t, f)
		start := time.Now()
		n, ok := s.Count()
		t.Logf("%s: %.3g raw, %d valid (countable %v), counted in %v", filepath.Base(f), s.RawSize(), n, ok, time.Since(start))
	}
}

// TestRejectSampleUniform is the chi-square test of the fallback sampler of
// spaces the tree cannot count, on the convolution space.
func TestRejectSampleUniform(t *testing.T) {
	s := sharedT1(t, "convolution")
	n := s.Size()
	draws := 30 * n
	rng := rand.New(rand.NewPCG(5, 6))
	counts := map[string]int{}
	for range draws {
		c, err := s.rejectSample(rng)
		if err != nil || !s.Valid(c) {
			t.Fatalf("rejectSample: %v, %v", c, err)
		}
		counts[s.Key(c)]++
	}
	chi, z := chiSquare(counts, n, draws)
	t.Logf("rejection sampler: chi-square %.0f on %d dof, z = %.2f", chi, n-1, z)
	if z > 4 {
		t.Errorf("rejection sampler: z = %.1f: not uniform", z)
	}
}

// TestUncountableSpace checks the fallbacks on a space whose one
// constraint reads all six parameters of 30 values each: the table could
// hold 30^5 states, so the tree gives up at once.
func TestUncountableSpace(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	var params []Param
	var sum string
	for i := range 6 {
		var vals []int64
		for v := range 30 {
			vals = append(vals, int64(v))
		}
		name := string(rune('a' + i))
		params = append(params, Param{Name: name, Values: ints(vals...)})
		if i > 0 {
			sum += "+"
		}
		sum += name
	}
	s, err := NewSpace(params, SpaceOptions{Constraints: []string{sum + " <= 60"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, ok := s.Count(); ok {
		t.Fatal("Count() succeeded on a space too wide to count")
	}
	if s.Enumerable() {
		t.Fatal("an uncountable space reports Enumerable")
	}
	t.Logf("gave up counting in %v", time.Since(start))
	rng := rand.New(rand.NewPCG(2, 3))
	for range 50 {
		c, err := s.Sample(rng)
		if err != nil || !s.Valid(c) {
			t.Fatalf("Sample: %v, %v", c, err)
		}
		m, err := s.Mutate(rng, c, 0.5, 0.3)
		if err != nil || !s.Valid(m) {
			t.Fatalf("Mutate: %v, %v", m, err)
		}
	}
	// All 29s is far from valid; its repair is the nearest valid config.
	c := make(Config, 6)
	for i := range c {
		c[i] = 29
	}
	r, err := s.Repair(rng, c)
	if err != nil || !s.Valid(r) {
		t.Fatalf("Repair: %v, %v", r, err)
	}
	if sumIdx := r[0] + r[1] + r[2] + r[3] + r[4] + r[5]; sumIdx != 60 {
		t.Errorf("Repair(all 29) = %v (sum %d): not on the boundary, so not nearest", r, sumIdx)
	}
	if s.all != nil {
		t.Fatal("the space was enumerated")
	}
}
