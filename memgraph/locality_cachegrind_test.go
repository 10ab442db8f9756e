package memgraph

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cgPattern is one program of testdata/cachegrind/patterns.c and the
// graph that describes the same accesses.
type cgPattern struct {
	name string
	g    *Graph
	// args gives the program's arguments after the pattern name, from
	// the plan's offsets (in tensor order).
	args func(off []int64) []string
}

func i64s(a ...int64) []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = strconv.FormatInt(x, 10)
	}
	return out
}

func cgPatterns() []cgPattern {
	const f = 4 // float
	one := func(id string, bytes int64, acc ...Access) *Graph {
		return &Graph{Name: id, Ops: []Op{{ID: "k", Access: acc}},
			Tensors: []Tensor{{ID: "x", Bytes: bytes, Input: true, Consumers: []string{"k"}}}}
	}
	two := func(id string, bytes int64, acc ...Access) *Graph {
		g := one(id, bytes, acc...)
		g.Tensors = append(g.Tensors, Tensor{ID: "y", Bytes: bytes, Producer: "k", Output: true})
		return g
	}
	var out []cgPattern
	// scan2: 48 KiB read twice.
	n := int64(12288)
	out = append(out, cgPattern{"scan2", one("scan2", n*f, Access{Tensor: "x", Pattern: "sequential", Passes: 2}),
		func(off []int64) []string { return i64s(n, off[0]) }})
	// copy: 256 KiB to 256 KiB.
	m := int64(65536)
	out = append(out, cgPattern{"copy", two("copy", m*f, Access{Tensor: "x", Pattern: "sequential"}, Access{Tensor: "y", Pattern: "sequential"}),
		func(off []int64) []string { return i64s(m, off[0], off[1]) }})
	// column: a 256 x 256 matrix walked column by column.
	c := int64(256)
	out = append(out, cgPattern{"column", one("column", c*c*f, Access{Tensor: "x", Pattern: "strided", Stride: c * f}),
		func(off []int64) []string { return i64s(c, off[0]) }})
	// transpose: read row-major, write column by column.
	out = append(out, cgPattern{"transpose", two("transpose", c*c*f, Access{Tensor: "x", Pattern: "sequential"}, Access{Tensor: "y", Pattern: "strided", Stride: c * f}),
		func(off []int64) []string { return i64s(c, off[0], off[1]) }})
	// matmul: 128 x 128, 32 x 32 x 32 blocks, loops i0 k0 j0 i k j.
	const mn, bs = int64(128), int64(32)
	nb := mn / bs
	mm := &Graph{Name: "matmul", Ops: []Op{{ID: "k", Access: []Access{
		{Tensor: "a", Pattern: "loops", Loops: [][]int64{{nb, bs * mn * f}, {nb, bs * f}, {nb, 0}, {bs, mn * f}, {bs, f}}},
		{Tensor: "b", Pattern: "loops", Loops: [][]int64{{nb, 0}, {nb, bs * mn * f}, {nb, bs * f}, {bs, 0}, {bs, mn * f}, {bs, f}}},
		{Tensor: "c", Pattern: "loops", Loops: [][]int64{{nb, bs * mn * f}, {nb, 0}, {nb, bs * f}, {bs, mn * f}, {bs, 0}, {bs, f}}},
	}}}, Tensors: []Tensor{
		{ID: "a", Bytes: mn * mn * f, Input: true, Consumers: []string{"k"}},
		{ID: "b", Bytes: mn * mn * f, Input: true, Consumers: []string{"k"}},
		{ID: "c", Bytes: mn * mn * f, Producer: "k", Output: true},
	}}
	out = append(out, cgPattern{"matmul", mm, func(off []int64) []string { return i64s(mn, bs, off[0], off[1], off[2]) }})
	// chain: three elementwise ops in a planned arena, default accesses
	// (each op reads its input and writes its output in sequence).
	ch := int64(16384)
	chain := &Graph{Name: "chain", Ops: []Op{{ID: "o0"}, {ID: "o1"}, {ID: "o2"}}, Tensors: []Tensor{
		{ID: "t0", Bytes: ch * f, Input: true, Consumers: []string{"o0"}},
		{ID: "t1", Bytes: ch * f, Producer: "o0", Consumers: []string{"o1"}},
		{ID: "t2", Bytes: ch * f, Producer: "o1", Consumers: []string{"o2"}},
		{ID: "t3", Bytes: ch * f, Producer: "o2", Output: true},
	}}
	out = append(out, cgPattern{"chain", chain, func(off []int64) []string { return i64s(ch, off[0], off[1], off[2], off[3]) }})
	return out
}

// cgCaches are the two hierarchies of the comparison, as cachegrind's
// --D1 and --LL take them: size,assoc,line.
var cgCaches = []CacheSpec{
	{Levels: []CacheLevel{{Name: "D1", Size: 32768, Assoc: 8, Line: 64}, {Name: "LL", Size: 131072, Assoc: 8, Line: 64}}},
	{Levels: []CacheLevel{{Name: "D1", Size: 8192, Assoc: 2, Line: 64}, {Name: "LL", Size: 65536, Assoc: 4, Line: 64}}},
}

func cgFlag(l CacheLevel) string {
	return fmt.Sprintf("--%s=%d,%d,%d", l.Name, l.Size, l.Assoc, l.Line)
}

// kernMisses sums D1 and LL data misses (reads and writes) over the
// kern_* functions of a cachegrind output file.
func kernMisses(t *testing.T, path string) (d1, ll int64) {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var events []string
	in := false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "events: "):
			events = strings.Fields(strings.TrimPrefix(line, "events: "))
		case strings.HasPrefix(line, "fn="):
			in = strings.HasPrefix(line, "fn=kern_")
		case in && len(line) > 0 && line[0] >= '0' && line[0] <= '9':
			fields := strings.Fields(line)[1:]
			for i, v := range fields {
				x, err := strconv.ParseInt(v, 10, 64)
				if err != nil || i >= len(events) {
					t.Fatalf("%s: bad line %q", path, line)
				}
				switch events[i] {
				case "D1mr", "D1mw":
					d1 += x
				case "DLmr", "DLmw":
					ll += x
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return d1, ll
}

func relErr(est, real int64) float64 {
	if real == 0 {
		if est == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return float64(est-real) / float64(real)
}

// TestMissesAgainstCachegrind runs each pattern of
// testdata/cachegrind/patterns.c (gcc -O1) under valgrind's cachegrind
// with two cache hierarchies and compares the D1 and LL data misses of
// its kern_* functions with Misses for the same graph, plan and cache.
// It prints docs/kernel-authors/memgraph.md's table (go test ./memgraph -run
// TestMissesAgainstCachegrind -v, or make cachegrind-check); it takes a
// few seconds, skips under -short, and skips when valgrind or gcc is
// missing.
func TestMissesAgainstCachegrind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs valgrind; make cachegrind-check")
	}
	for _, tool := range []string{"valgrind", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: cannot check the miss estimate against cachegrind", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "patterns")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, "testdata/cachegrind/patterns.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| program arguments | cache (D1; LL) | accesses | D1 cachegrind | D1 ours | D1 error | D1 fully assoc. | LL cachegrind | LL ours | LL error | LL fully assoc. |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	worst := 0.0
	for _, p := range cgPatterns() {
		var args []string
		r, err := Plan(p.g, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, cs := range cgCaches {
			est, err := Misses(p.g, r, cs)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			out := filepath.Join(dir, "cg.out")
			args = append([]string{"--tool=cachegrind", "--cache-sim=yes", cgFlag(cs.Levels[0]), cgFlag(cs.Levels[1]),
				"--cachegrind-out-file=" + out, bin, p.name}, p.args(r.Offsets)...)
			if msg, err := exec.Command("valgrind", args...).CombinedOutput(); err != nil {
				t.Fatalf("valgrind %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			d1, ll := kernMisses(t, out)
			e1, e2 := relErr(est.Levels[0].Misses, d1), relErr(est.Levels[1].Misses, ll)
			worst = max(worst, math.Abs(e1), math.Abs(e2))
			fmt.Fprintf(&b, "| %s | %d,%d,%d; %d,%d,%d | %d | %d | %d | %+.2f%% | %d | %d | %d | %+.2f%% | %d |\n",
				p.name+" "+strings.Join(p.args(r.Offsets), " "), cs.Levels[0].Size, cs.Levels[0].Assoc, cs.Levels[0].Line, cs.Levels[1].Size, cs.Levels[1].Assoc, cs.Levels[1].Line,
				est.Accesses, d1, est.Levels[0].Misses, 100*e1, est.Levels[0].FullyAssociative,
				ll, est.Levels[1].Misses, 100*e2, est.Levels[1].FullyAssociative)
		}
	}
	t.Log("\n" + b.String())
	if worst > 0.05 {
		t.Errorf("worst relative error %.2f%%, over 5%%", 100*worst)
	}
}
