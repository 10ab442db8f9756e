package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestOnMiss(t *testing.T) {
	t.Parallel()
	const base = "name: k\nevaluator: builtin:sgemm\nproblems: ['256,256,256', '128,512,64']\ntune_on_miss: true\n"
	// Defaults: each dim's largest listed size, the largest listed volume.
	s := mustParse(t, "/k/a.yaml", base)
	b, ok := s.MissBounds()
	if !ok || !slices.Equal(b.MaxProblem, []int{256, 512, 256}) || b.MaxVolume != 256*256*256 {
		t.Errorf("default bounds = %+v, %v; want max_problem 256,512,256 and volume 256^3", b, ok)
	}
	for _, tt := range []struct {
		dims []int
		want string // "" for allowed
	}{
		{[]int{200, 256, 100}, ""},
		{[]int{256, 256, 256}, ""},
		{[]int{8192, 8192, 8192}, "dim m = 8192 is over on_miss.max_problem 256,512,256"},
		{[]int{256, 512, 256}, "volume 33554432 is over on_miss.max_volume 16777216"},
		{[]int{1, 2}, "2 dims"},
	} {
		err := s.CheckMiss(tt.dims)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckMiss(%v) = %v, want %q", tt.dims, err, tt.want)
		}
	}
	// Explicit bounds, in YAML and JSON alike; they change the hash.
	y := mustParse(t, "/k/a.yaml", base+"on_miss: {max_problem: 1024x1024x1024, max_volume: 1e9}\n")
	j := mustParse(t, "/k/a.json", `{"name": "k", "evaluator": "builtin:sgemm", "problems": ["256,256,256", "128,512,64"], "tune_on_miss": true, "on_miss": {"max_problem": [1024, 1024, 1024], "max_volume": 1000000000}}`)
	if y.Hash != j.Hash || y.Hash == s.Hash || !slices.Equal(y.OnMiss.MaxProblem, []int{1024, 1024, 1024}) || y.OnMiss.MaxVolume != 1e9 {
		t.Errorf("on_miss: %+v hash %s, JSON hash %s, without %s", y.OnMiss, y.Hash, j.Hash, s.Hash)
	}
	if err := y.CheckMiss([]int{1024, 512, 1024}); err != nil {
		t.Errorf("within explicit bounds: %v", err)
	}
	if err := y.CheckMiss([]int{1024, 1024, 1024}); err == nil {
		t.Error("over max_volume 1e9: allowed")
	}
	// No problems to bound by, no bounds given: no miss adds a job.
	r := mustParse(t, "/k/r.yaml", "name: r\nevaluator: replay:x.json\ntune_on_miss: true\n")
	if err := r.CheckMiss([]int{8}); err == nil || !strings.Contains(err.Error(), "set on_miss.max_problem") {
		t.Errorf("replay spec without bounds: CheckMiss = %v", err)
	}
	// Bad input names the field.
	for _, tt := range []struct{ src, want string }{
		{"on_miss: {max_problme: 1}\n", "on_miss.max_problme: unknown key"},
		{"on_miss: {max_problem: '1024,1024'}\n", "on_miss.max_problem: 1024,1024 has 2 dims, want 3"},
		{"on_miss: {max_problem: '0,1,1'}\n", "on_miss.max_problem: problem"},
		{"on_miss: {max_volume: -5}\n", "on_miss.max_volume: -5.0: want a product of dims"},
		{"on_miss: {max_volume: big}\n", "on_miss.max_volume"},
		{"on_miss: 3\n", "on_miss"},
	} {
		_, err := Parse("/k/b.yaml", []byte(base+tt.src))
		if err == nil || !strings.Contains(err.Error(), "/k/b.yaml: "+tt.want) {
			t.Errorf("Parse(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
}
