package genome

import (
	"compress/gzip"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func ints(xs ...int64) []Value {
	out := make([]Value, len(xs))
	for i, x := range xs {
		out[i] = Int(x)
	}
	return out
}

// smallSpace has 4*3*2 = 24 raw configs, 9 of them invalid by the constraints.
func smallSpace(t testing.TB) *Space {
	t.Helper()
	s, err := NewSpace([]Param{
		{Name: "bx", Values: ints(1, 2, 4, 8)},
		{Name: "by", Values: ints(1, 2, 4), Default: 1},
		{Name: "mode", Kind: KindString, Values: []Value{Str("a"), Str("b")}},
	}, SpaceOptions{
		Constraints: []string{"bx * by <= n", "mode == 'a' or bx > 1"},
		Vars:        map[string]Value{"n": Int(8)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpaceEnumerate(t *testing.T) {
	s := smallSpace(t)
	var want []Config
	for i := range 4 {
		for j := range 3 {
			for k := range 2 {
				bx, by := []int{1, 2, 4, 8}[i], []int{1, 2, 4}[j]
				if bx*by <= 8 && (k == 0 || bx > 1) {
					want = append(want, Config{i, j, k})
				}
			}
		}
	}
	got := s.All()
	if !slices.EqualFunc(got, want, Config.Equal) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	for _, c := range got {
		if !s.Valid(c) {
			t.Errorf("Valid(%v) = false for an enumerated config", c)
		}
		if err := s.Check(c); err != nil {
			t.Errorf("Check(%v) = %v", c, err)
		}
	}
	if err := s.Check(Config{3, 2, 0}); err == nil {
		t.Errorf("Check(8,4,a) = nil, want a violated constraint")
	}
}

func TestKeyRoundTrip(t *testing.T) {
	s, err := NewSpace([]Param{
		{Name: "i", Values: ints(-1, 0, 16)},
		{Name: "f", Kind: KindFloat, Values: []Value{Float(0.5), Float(1), Float(1e-5)}},
		{Name: "b", Kind: KindBool, Values: []Value{Bool(false), Bool(true)}},
		{Name: "s", Kind: KindString, Values: []Value{Str("ijk"), Str("ikj")}},
	}, SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		c   Config
		key string
	}{
		{Config{0, 0, 0, 0}, "-1,0.5,False,ijk"},
		{Config{2, 1, 1, 1}, "16,1.0,True,ikj"},
		{Config{1, 2, 0, 1}, "0,1e-05,False,ikj"},
	}
	for _, tt := range tests {
		if got := s.Key(tt.c); got != tt.key {
			t.Errorf("Key(%v) = %q, want %q", tt.c, got, tt.key)
		}
		back, err := s.ParseKey(tt.key)
		if err != nil || !back.Equal(tt.c) {
			t.Errorf("ParseKey(%q) = %v, %v, want %v", tt.key, back, err, tt.c)
		}
		if h := s.Hash(tt.c); len(h) != 16 || h != KeyHash(tt.key) {
			t.Errorf("Hash(%v) = %q", tt.c, h)
		}
	}
	for _, bad := range []string{"", "1,2", "-1,0.5,False,xyz", "-1,0.5,False,ijk,1", "7,0.5,False,ijk"} {
		if _, err := s.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = nil error", bad)
		}
	}
	// The hash is stable across runs and releases: pin one value.
	if got, want := KeyHash("16,1.0,True,ikj"), "42cb901bf3a7e943"; got != want {
		t.Errorf("KeyHash = %q, want %q", got, want)
	}
}

func TestNewSpaceErrors(t *testing.T) {
	tests := []struct {
		name   string
		params []Param
		opt    SpaceOptions
	}{
		{"none", nil, SpaceOptions{}},
		{"empty values", []Param{{Name: "a"}}, SpaceOptions{}},
		{"dup name", []Param{{Name: "a", Values: ints(1)}, {Name: "a", Values: ints(2)}}, SpaceOptions{}},
		{"dup value", []Param{{Name: "a", Values: ints(1, 1)}}, SpaceOptions{}},
		{"bad name", []Param{{Name: "a b", Values: ints(1)}}, SpaceOptions{}},
		{"keyword", []Param{{Name: "and", Values: ints(1)}}, SpaceOptions{}},
		{"mixed kinds", []Param{{Name: "a", Kind: KindInt, Values: []Value{Int(1), Str("x")}}}, SpaceOptions{}},
		{"comma", []Param{{Name: "a", Kind: KindString, Values: []Value{Str("x,y")}}}, SpaceOptions{}},
		{"default", []Param{{Name: "a", Values: ints(1), Default: 3}}, SpaceOptions{}},
		{"bad constraint", []Param{{Name: "a", Values: ints(1)}}, SpaceOptions{Constraints: []string{"a +"}}},
		{"unknown name", []Param{{Name: "a", Values: ints(1)}}, SpaceOptions{Constraints: []string{"b > 1"}}},
		{"var clash", []Param{{Name: "a", Values: ints(1)}}, SpaceOptions{Vars: map[string]Value{"a": Int(1)}}},
		{"bad domain", []Param{{Name: "a", Values: ints(1)}}, SpaceOptions{Domain: []string{"2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewSpace(tt.params, tt.opt); err == nil {
				t.Errorf("NewSpace = nil error")
			}
		})
	}
}

func TestDomain(t *testing.T) {
	s, err := NewSpace([]Param{{Name: "a", Values: ints(1, 2, 3)}, {Name: "b", Values: ints(1, 2)}},
		SpaceOptions{Domain: []string{"3,1", "1,2", "2,2"}, Constraints: []string{"a != 2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Config{{0, 1}, {2, 0}}
	if got := s.All(); !slices.EqualFunc(got, want, Config.Equal) {
		t.Errorf("All() = %v, want %v", got, want)
	}
	if s.Valid(Config{0, 0}) {
		t.Errorf("Valid(1,1) = true outside the domain")
	}
}

func TestSampleUniform(t *testing.T) {
	s := smallSpace(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := len(s.All())
	counts := map[string]int{}
	const draws = 30000
	for range draws {
		c, err := s.Sample(rng)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Valid(c) {
			t.Fatalf("Sample() = invalid %v", c)
		}
		counts[s.Key(c)]++
	}
	if len(counts) != n {
		t.Fatalf("Sample hit %d distinct configs, want %d", len(counts), n)
	}
	// Chi-square with n-1 degrees of freedom; 3x the dof is far in the tail.
	exp := float64(draws) / float64(n)
	chi := 0.0
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	if chi > 3*float64(n-1)+20 {
		t.Errorf("chi-square = %.1f over %d configs: not uniform", chi, n)
	}
}

func TestNeighbours(t *testing.T) {
	s := smallSpace(t)
	// bx=2, by=2, mode=b: moves bx to 1 (invalid: mode b needs bx>1) or 4
	// (valid), by to 1 or 4 (4 is 8: valid), mode to a.
	got := s.Neighbours(Config{1, 1, 1})
	want := []Config{{2, 1, 1}, {1, 0, 1}, {1, 2, 1}, {1, 1, 0}}
	if !slices.EqualFunc(got, want, Config.Equal) {
		t.Errorf("Neighbours = %v, want %v", got, want)
	}
}

func TestVariationKeepsValid(t *testing.T) {
	s := smallSpace(t)
	rng := rand.New(rand.NewPCG(3, 4))
	all := s.All()
	for i := range 2000 {
		a, b := all[rng.IntN(len(all))], all[rng.IntN(len(all))]
		m, err := s.Mutate(rng, a, 0.5, 0.3)
		if err != nil || !s.Valid(m) {
			t.Fatalf("Mutate(%v) = %v, %v", a, m, err)
		}
		x, err := s.Crossover(rng, a, b)
		if err != nil || !s.Valid(x) {
			t.Fatalf("Crossover(%v, %v) = %v, %v", a, b, x, err)
		}
		_ = i
	}
	// Repair of an invalid config gives the nearest valid one.
	r, err := s.Repair(rng, Config{3, 2, 1}) // 8*4 > 8
	if err != nil {
		t.Fatal(err)
	}
	if !s.Valid(r) {
		t.Fatalf("Repair(8,4,b) = invalid %v", r)
	}
	for _, c := range s.All() {
		if s.Distance(c, Config{3, 2, 1}) < s.Distance(r, Config{3, 2, 1}) {
			t.Errorf("Repair(8,4,b) = %v, but %v is nearer", r, c)
		}
	}
}

func TestStepIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 2; n < 9; n++ {
		for j := range n {
			for range 200 {
				k := StepIndex(rng, j, n, 0.7)
				if k == j || k < 0 || k >= n {
					t.Fatalf("StepIndex(%d, %d) = %d", j, n, k)
				}
			}
		}
	}
}

// sharedSpaces is ../shared/spaces, which tests use when it is present.
func sharedSpaces(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "spaces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: %s not found (the shared search spaces sit beside the checkout)", dir)
	}
	return dir
}

func readCacheKeys(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Cache map[string]json.RawMessage `json:"cache"`
	}
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(c.Cache))
	for k := range c.Cache {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestT1EnumerationMatchesCache(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping under -short (CI's race pass): single-goroutine numerics, run in full without -short")
	}
	dir := sharedSpaces(t)
	for _, name := range []string{"convolution_milo", "dedispersion_milo"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "kernels", name+".T1.json"))
			if err != nil {
				t.Fatal(err)
			}
			t1, err := ParseT1(name+".T1.json", data)
			if err != nil {
				t.Fatal(err)
			}
			s, err := t1.Space()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range s.All() {
				got = append(got, s.Key(c))
			}
			slices.Sort(got)
			want := readCacheKeys(t, filepath.Join(dir, name+"_A100.json.gz"))
			if !slices.Equal(got, want) {
				t.Fatalf("T1 enumeration has %d configs, cache has %d; first difference %q", len(got), len(want), firstDiff(got, want))
			}
			t.Logf("%s: %.0f raw combinations, %d valid, equal to the cache", name, s.RawSize(), len(got))
		})
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " vs " + b[i]
		}
	}
	return "(length)"
}

func TestT1AllShared(t *testing.T) {
	dir := sharedSpaces(t)
	files, _ := filepath.Glob(filepath.Join(dir, "kernels", "*.T1.json"))
	if len(files) == 0 {
		t.Skip("skipping: no T1 files in the shared spaces")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t1, err := ParseT1(filepath.Base(f), data)
		if err != nil {
			t.Fatalf("ParseT1(%s): %v", f, err)
		}
		s, err := t1.Space()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if s.Size() == 0 {
			t.Errorf("%s: no valid configs", f)
		}
		t.Logf("%s: %d params, %.0f raw, %d valid", t1.Name, s.Len(), s.RawSize(), s.Size())
	}
}

func TestParseT1Errors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not json", `{`, "bad.T1.json"},
		{"no params", `{"ConfigurationSpace":{"TuningParameters":[]}}`, "no parameters"},
		{"bad type", `{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"complex","Values":"[1]"}]}}`, "Type"},
		{"bad values", `{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[1,"}]}}`, "Values"},
		{"float as int", `{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[1.5]"}]}}`, "Values[0]"},
		{"bad condition", `{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[1]"}],"Conditions":[{"Expression":"a >"}]}}`, "constraint 0"},
		{"unknown name", `{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[1]"}],"Conditions":[{"Expression":"b > 1"}]}}`, "unknown name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t1, err := ParseT1("bad.T1.json", []byte(tt.data))
			if err == nil {
				_, err = t1.Space()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseT1 error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func FuzzParseT1(f *testing.F) {
	f.Add([]byte(`{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[16*i for i in range(1,9)]","Default":16}],"Conditions":[{"Expression":"a % 32 != 0"}]}}`))
	f.Add([]byte(`{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"float","Values":[1,2.5]}]}}`))
	f.Add([]byte(`{}`))
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "spaces", "kernels", "*.T1.json"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		t1, err := ParseT1("fuzz.T1.json", data)
		if err != nil {
			return
		}
		s, err := t1.Space()
		if err != nil || s.RawSize() > 1e5 {
			return
		}
		for _, c := range s.All() {
			if back, err := s.ParseKey(s.Key(c)); err != nil || !back.Equal(c) {
				t.Fatalf("key round trip of %v: %v %v", c, back, err)
			}
		}
	})
}

func BenchmarkEnumerateConvolutionT1(b *testing.B) {
	dir := sharedSpaces(b)
	data, err := os.ReadFile(filepath.Join(dir, "kernels", "convolution_milo.T1.json"))
	if err != nil {
		b.Fatal(err)
	}
	t1, err := ParseT1("convolution_milo.T1.json", data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := t1.Space()
		if err != nil {
			b.Fatal(err)
		}
		if len(s.All()) == 0 {
			b.Fatal("empty")
		}
	}
}

func TestRestrict(t *testing.T) {
	s := smallSpace(t)
	r, err := s.Restrict([]string{"by in [1, 2]", "bx >= m"}, map[string]Value{"m": Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.All() {
		v := r.Map(c)
		if !s.Valid(c) || v["by"].I > 2 || v["bx"].I < 2 {
			t.Errorf("Restrict kept %s", r.Key(c))
		}
	}
	if len(r.All()) == 0 || len(r.All()) >= len(s.All()) {
		t.Errorf("Restrict: %d configs of %d", len(r.All()), len(s.All()))
	}
	if _, err := s.Restrict([]string{"nope > 1"}, nil); err == nil {
		t.Errorf("Restrict(unknown name) = nil error")
	}
	d, _ := NewSpace([]Param{{Name: "a", Values: ints(1, 2, 3)}}, SpaceOptions{Domain: []string{"1", "3"}})
	rd, err := d.Restrict([]string{"a > 1"}, nil)
	if err != nil || len(rd.All()) != 1 || rd.Key(rd.All()[0]) != "3" {
		t.Errorf("Restrict on a domain space = %v, %v", rd.All(), err)
	}
}

func TestTranslate(t *testing.T) {
	from, err := NewSpace([]Param{
		{Name: "x", Kind: KindInt, Values: []Value{Int(1), Int(2), Int(4)}},
		{Name: "extra", Kind: KindInt, Values: []Value{Int(0), Int(1)}},
		{Name: "y", Kind: KindString, Values: []Value{Str("a"), Str("b")}},
	}, SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	to, err := NewSpace([]Param{
		{Name: "y", Kind: KindString, Values: []Value{Str("b"), Str("a")}},
		{Name: "x", Kind: KindInt, Values: []Value{Int(2), Int(4), Int(8)}},
	}, SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := to.Translate(from, Config{2, 1, 0})
	if !ok || to.Key(c) != "a,4" {
		t.Errorf("Translate(4,1,a) = %v %v, want a,4", c, ok)
	}
	if _, ok := to.Translate(from, Config{0, 0, 0}); ok {
		t.Error("x=1 is not a value of the target, yet it translated")
	}
	if _, ok := from.Translate(to, Config{0, 0}); ok {
		t.Error("the target lacks extra, yet it translated back")
	}
}

// BenchmarkConstructT1 builds each shipped T1 space from its file and
// either lists every valid config (All) or counts them without listing
// (Count, what the samplers of a space too large to list use), to set
// beside the construction times other tuners publish:
//
//	go test ./genome -run '^$' -bench ConstructT1 -benchtime 5x
func BenchmarkConstructT1(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(sharedSpaces(b), "kernels", "*.T1.json"))
	if len(files) == 0 {
		b.Skip("skipping: no T1 files in the shared spaces")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".T1.json")
		for _, how := range []string{"list", "count"} {
			b.Run(name+"/"+how, func(b *testing.B) {
				n := 0
				for b.Loop() {
					t1, err := ParseT1(filepath.Base(path), data)
					if err != nil {
						b.Fatal(err)
					}
					s, err := t1.Space()
					if err != nil {
						b.Fatal(err)
					}
					if how == "list" {
						n = len(s.All())
					} else {
						c, ok := s.Count()
						if !ok {
							b.Skip("not countable")
						}
						n = int(c)
					}
				}
				b.ReportMetric(float64(n), "configs")
			})
		}
	}
}
