package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// benchSpaces returns a small recorded space always, plus two shared real
// ones when ../shared is present, else the synthetic one of evaluate/replay.
func benchSpaces(t *testing.T) []string {
	spaces := []string{"--space", filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")}
	shared := filepath.Join("..", "..", "..", "..", "shared", "spaces")
	if _, err := os.Stat(shared); err == nil {
		spaces = append(spaces, "--space", filepath.Join(shared, "convolution_milo_A100.json.gz"))
		// The gemm space is the largest: under -short (CI's race pass) the
		// same code runs on the two smaller ones.
		if !testing.Short() {
			spaces = append(spaces, "--space", filepath.Join(shared, "gemm_clblast_RTX_3090.json.gz"))
		}
	} else {
		// small_cache's 5 configs are all measured within any budget, so
		// the checks of budgets and noise need a space larger than 60.
		t.Logf("%s not found: benchmarking the test spaces of evaluate/replay only", shared)
		spaces = append(spaces, "--space", filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "synthetic_energy.json"))
	}
	return spaces
}

func decodeReport(t *testing.T, s string) benchReport {
	t.Helper()
	var rep benchReport
	if err := json.Unmarshal([]byte(s), &rep); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, s)
	}
	// The strategy's own time is not in a trace.
	for i := range rep.Scores {
		rep.Scores[i].OverheadUS = 0
	}
	for i := range rep.Mean {
		rep.Mean[i].OverheadUS = 0
	}
	rep.Batch = 0
	// bench orders strategies as asked, score alphabetically.
	slices.SortFunc(rep.Scores, func(a, b evolve.Score) int {
		return cmp.Or(cmp.Compare(a.Strategy, b.Strategy), cmp.Compare(a.Space, b.Space))
	})
	slices.SortFunc(rep.Mean, func(a, b evolve.Score) int { return cmp.Compare(a.Strategy, b.Strategy) })
	return rep
}

func TestBenchScoresEqualTraces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := append([]string{"bench", "--budget", "60", "--seeds", "3", "--json", "--quiet", "--trace", dir}, benchSpaces(t)...)
	out, errs, code := run(t, args...)
	if code != 0 {
		t.Fatalf("bench exit %d: %s", code, errs)
	}
	got := decodeReport(t, out)
	if len(got.Scores) == 0 || got.Mean[0].At[25] <= 0 {
		t.Fatalf("bench reported no scores: %s", out)
	}
	out2, errs, code := run(t, append([]string{"bench", "score", "--json", "--trace", dir}, benchSpaces(t)...)...)
	if code != 0 {
		t.Fatalf("bench score exit %d: %s", code, errs)
	}
	want := decodeReport(t, out2)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Errorf("bench scores differ from scores recomputed from traces:\nbench: %s\nscore: %s", a, b)
	}
	// Under --noise the traces keep what each run was shown, so bench
	// score gives the same scores again, and they differ from the quiet ones.
	noisy := t.TempDir()
	out, errs, code = run(t, append([]string{"bench", "--budget", "60", "--seeds", "3", "--json", "--quiet", "--noise", "--trace", noisy}, benchSpaces(t)...)...)
	if code != 0 {
		t.Fatalf("bench --noise exit %d: %s", code, errs)
	}
	out2, errs, code = run(t, append([]string{"bench", "score", "--json", "--trace", noisy}, benchSpaces(t)...)...)
	if code != 0 {
		t.Fatalf("bench score of noisy traces exit %d: %s", code, errs)
	}
	gotNoisy, wantNoisy := decodeReport(t, out), decodeReport(t, out2)
	a, _ = json.Marshal(gotNoisy)
	b, _ = json.Marshal(wantNoisy)
	if !bytes.Equal(a, b) {
		t.Errorf("bench --noise scores differ from its traces':\nbench: %s\nscore: %s", a, b)
	}
	q, _ := json.Marshal(got.Scores)
	n, _ := json.Marshal(gotNoisy.Scores)
	if bytes.Equal(q, n) {
		t.Error("noise changed no score")
	}
	// A trace that lies about a time is caught.
	p := filepath.Join(dir, "small_cache", "es", "seed-1.jsonl")
	data, _ := os.ReadFile(p)
	lines := strings.SplitN(string(data), "\n", 2)
	var l traceLine
	json.Unmarshal([]byte(lines[0]), &l)
	l.Status = "ok"
	bad := 0.001
	l.TimeMS = &bad
	fake, _ := json.Marshal(l)
	os.WriteFile(p, append(append(fake, '\n'), lines[1]...), 0o644)
	if _, errs, code := run(t, append([]string{"bench", "score", "--trace", dir}, benchSpaces(t)...)...); code == 0 || !strings.Contains(errs, "seed-1.jsonl:1") {
		t.Errorf("bench score on a doctored trace: exit %d, %s", code, errs)
	}
}

func TestBenchResumeSameTrace(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	base := append([]string{"bench", "--budget", "120", "--seeds", "2", "--quiet", "--strategy", "es,random"}, benchSpaces(t)...)
	if _, errs, code := run(t, append(base, "--trace", a)...); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := run(t, append(base, "--trace", b, "--roundtrip-at", "50")...); code != 0 {
		t.Fatal(errs)
	}
	n := 0
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: resumed trace differs from the uninterrupted one", rel)
		}
		n++
		return nil
	})
	if n == 0 {
		t.Fatal("no traces written")
	}
}

func TestBenchTable(t *testing.T) {
	t.Parallel()
	out, errs, code := run(t, append([]string{"bench", "--budget", "30", "--seeds", "2"}, benchSpaces(t)[:2]...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"k=5 ", "to95", "small_cache", "random (exact)", "mean (1 spaces)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The space has 5 configs: no run gets to k=25.
	if strings.Contains(out, "k=25") {
		t.Errorf("table has k=25 for a space of 5 configs:\n%s", out)
	}
	if !strings.Contains(errs, "bench: 4/4 runs") {
		t.Errorf("no progress on stderr: %q", errs)
	}
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	small := filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no space", []string{"bench"}, exitUsage, "no --space"},
		{"missing space", []string{"bench", "--space", "/nonexistent"}, exitUsage, "/nonexistent"},
		{"bad strategy", []string{"bench", "--space", small, "--strategy", "magic"}, exitUsage, `unknown strategy "magic"`},
		{"bad budget", []string{"bench", "--space", small, "--budget", "0"}, exitUsage, "--budget"},
		{"bad flag", []string{"bench", "--frobnicate"}, exitUsage, "frobnicate"},
		{"not a recording", []string{"bench", "--space", "bench_test.go"}, exitError, "bench_test.go"},
		{"score without trace", []string{"bench", "score", "--space", small}, exitUsage, "--trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("quasimctl %v: exit %d, %q; want exit %d mentioning %q", tt.args, code, errs, tt.code, tt.want)
			}
		})
	}
}

func FuzzParseTraceLine(f *testing.F) {
	rec, err := replay.Load(filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json"))
	if err != nil {
		f.Fatal(err)
	}
	s := newBenchSpace(rec)
	f.Add([]byte(`{"key":"32,0.5,a","status":"ok","time_ms":1.5}`))
	f.Add([]byte(`{"key":"64,1.0,b","status":"compile","time_ms":null}`))
	f.Add([]byte(`{"key":"nope"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseTraceLine(b, s)
		if err != nil {
			return
		}
		tr, ok := rec.Trial(m.Key)
		if !ok || string(tr.Status) != m.Status || tr.Time != m.Time {
			t.Fatalf("accepted %q as %+v, recording says %+v", b, m, tr)
		}
	})
}

// --report writes the scores as an HTML page with a chart per space and
// the peers' numbers beside ours.
func TestBenchReport(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bench.html")
	peers := filepath.Join(t.TempDir(), "peers.json")
	if err := os.WriteFile(peers, []byte(`{"source": "test peers", "spaces": {"small_cache": {"sa": {"25": 0.5, "evals_to_95": 3}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"bench", "--budget", "25", "--seeds", "2", "--quiet", "--strategy", "random,es", "--peers", peers, "--report", file,
		"--space", filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")}
	if _, errs, code := run(t, args...); code != 0 {
		t.Fatalf("bench exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "bench page", string(b), `<svg class="chart"`, `data-name="es"`, `data-name="random"`, "peer: sa", "test peers", "small_cache")
}

// Several peer files compare as one set: the best peer at each k is taken
// over all their strategies, on the spaces every file has.
func TestBenchSeveralPeers(t *testing.T) {
	t.Parallel()
	small := filepath.Join("..", "..", "..", "evaluate", "replay", "testdata", "small_cache.json")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("kt.json", `{"source": "A", "spaces": {"small_cache": {"alpha": {"5": 0.5}, "gamma": {"5": 0.7}}, "other": {"alpha": {"5": 1}}}}`)
	b := write("opt.json", `{"source": "B", "spaces": {"small_cache": {"beta": {"5": 0.9}}}}`)
	out, errs, code := run(t, "bench", "--space", small, "--budget", "5", "--seeds", "2", "--peers", a+","+b, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep := decodeReport(t, out)
	p := rep.Peers
	if p == nil || !slices.Equal(p.Spaces, []string{"small_cache"}) {
		t.Fatalf("peers %+v, want the one space both files have", p)
	}
	if b := p.Best[5]; b.Strategy != "beta" || b.File != "opt" || b.Value != 0.9 {
		t.Errorf("best peer at k=5 %+v, want beta from opt.json at 0.9", b)
	}
	if len(p.Peer) != 3 || p.Source != "A; B" {
		t.Errorf("peer means %v, source %q: want alpha, beta and gamma from A and B", p.Peer, p.Source)
	}
	// Repeated flags are the same as a list; the table names the best.
	out, errs, code = run(t, "bench", "--space", small, "--budget", "5", "--seeds", "2", "--peers", a, "--peers", b)
	if code != 0 || !strings.Contains(out, "best peer at each k, mean over small_cache: k=5 beta (opt) 0.900") {
		t.Errorf("exit %d %s, table:\n%s", code, errs, out)
	}
	// One strategy in two files is ambiguous.
	c := write("dup.json", `{"spaces": {"small_cache": {"alpha": {"5": 0.1}}}}`)
	_, errs, code = run(t, "bench", "--space", small, "--budget", "5", "--peers", a+","+c)
	if code == 0 || !strings.Contains(errs, `strategy "alpha" is in both`) {
		t.Errorf("duplicate strategy: exit %d, %q", code, errs)
	}
}

// Variants of a strategy given with options run side by side, and bench
// score --loo chooses among them leaving one space out; the JSON report
// names the variant chosen for each space and gives each strategy's seed
// spread.
func TestBenchLeaveOneOut(t *testing.T) {
	if testing.Short() {
		// CI's race pass (71 s under -race): bench's goroutines run under
		// it in TestBenchScoresEqualTraces; go test ./... runs this in full.
		t.Skip("skipping under -short: nine portfolio runs on two spaces and their scores, run in full without -short")
	}
	t.Parallel()
	dir := t.TempDir()
	args := append([]string{"bench", "--budget", "40", "--seeds", "3", "--quiet", "--trace", dir,
		"--strategy", "portfolio,portfolio:alloc=uniform,portfolio:members=es+forest"}, benchSpaces(t)...)
	if _, errs, code := run(t, args...); code != 0 {
		t.Fatalf("bench exit %d: %s", code, errs)
	}
	out, errs, code := run(t, append([]string{"bench", "score", "--json", "--trace", dir, "--loo", "portfolio"}, benchSpaces(t)...)...)
	if code != 0 {
		t.Fatalf("bench score --loo exit %d: %s", code, errs)
	}
	rep := decodeReport(t, out)
	if rep.LOO == nil || len(rep.LOO.Candidates) != 3 || len(rep.LOO.Chosen) != len(rep.Spaces) {
		t.Fatalf("loo report %+v for %d spaces", rep.LOO, len(rep.Spaces))
	}
	for _, st := range []string{"portfolio", "portfolio:alloc=uniform", "portfolio:members=es+forest"} {
		if _, ok := rep.Spread[st]; !ok {
			t.Errorf("no seed spread for %s: %v", st, rep.Spread)
		}
	}
	text, _, _ := run(t, append([]string{"bench", "score", "--trace", dir, "--loo", "portfolio"}, benchSpaces(t)...)...)
	if !strings.Contains(text, "held out (each space scored by the variant chosen without its space)") || !strings.Contains(text, "seed spread") {
		t.Errorf("bench score --loo text lacks the held-out row or the spread:\n%s", text)
	}
	text, _, _ = run(t, append([]string{"bench", "score", "--trace", dir, "--loo", "portfolio", "--loo-by", "kernel"}, benchSpaces(t)...)...)
	if !strings.Contains(text, "leave one kernel out among 3 variants") || !strings.Contains(text, "chosen without its kernel") {
		t.Errorf("bench score --loo-by kernel:\n%s", text)
	}
	if _, errs, code := run(t, append([]string{"bench", "score", "--trace", dir, "--loo", "portfolio", "--loo-by", "gpu"}, benchSpaces(t)...)...); code != 2 || !strings.Contains(errs, "--loo-by") {
		t.Errorf("--loo-by gpu: exit %d, %s", code, errs)
	}
	// --versus pairs by seed, the same from bench and from its traces.
	versus := func(args ...string) *versusReport {
		t.Helper()
		out, errs, code := run(t, append(args, benchSpaces(t)...)...)
		if code != 0 {
			t.Fatalf("%v exit %d: %s", args, code, errs)
		}
		v := decodeReport(t, out).Versus
		if v == nil || v.Base != "portfolio:alloc=uniform" || len(v.Paired) != 2 || v.Paired["portfolio"].Seeds != 3 {
			t.Fatalf("%v: versus report %+v", args, v)
		}
		return v
	}
	fresh := versus("bench", "--budget", "40", "--seeds", "3", "--quiet", "--json", "--versus", "portfolio:alloc=uniform",
		"--strategy", "portfolio,portfolio:alloc=uniform,portfolio:members=es+forest")
	scored := versus("bench", "score", "--json", "--trace", dir, "--versus", "portfolio:alloc=uniform")
	if !reflect.DeepEqual(fresh, scored) {
		t.Errorf("--versus from bench %+v, from bench score %+v", fresh, scored)
	}
	text, _, _ = run(t, append([]string{"bench", "score", "--trace", dir, "--versus", "portfolio:alloc=uniform"}, benchSpaces(t)...)...)
	if !strings.Contains(text, "paired with portfolio:alloc=uniform, seed by seed") || !strings.Contains(text, "seeds won") {
		t.Errorf("bench score --versus text lacks the paired rows:\n%s", text)
	}
	if _, errs, code := run(t, append([]string{"bench", "score", "--trace", dir, "--versus", "es"}, benchSpaces(t)...)...); code == 0 || !strings.Contains(errs, "--versus es: not among the strategies") {
		t.Errorf("--versus es not traced: exit %d, %s", code, errs)
	}
	if _, errs, code := run(t, append([]string{"bench", "score", "--trace", dir, "--loo", "es"}, benchSpaces(t)...)...); code == 0 || !strings.Contains(errs, "needs two or more") {
		t.Errorf("--loo es with no variant traced: exit %d, %s", code, errs)
	}
	if _, errs, code := run(t, "bench", "--space", dir, "--strategy", "forest:leaves=3"); code == 0 || !strings.Contains(errs, `unknown option "leaves"`) {
		t.Errorf("bench with a bad option: exit %d, %s", code, errs)
	}
}

// bench live refuses finalist counts quasimd refuses, and a time limit
// that is negative or given with --brute-force, naming the flag, before it
// starts any worker.
func TestBenchLiveBadFinalists(t *testing.T) {
	spec := filepath.Join("..", "..", "..", "examples", "opencl", "matmul.yaml")
	for _, args := range [][]string{{"--finalists", "-1"}, {"--confirm-rounds", "0"}, {"--time-limit", "-1s"}, {"--time-limit", "1m", "--brute-force"}, {"--finalists-within", "0.5"}, {"--confirm-share", "-0.5"}} {
		_, errs, code := run(t, append([]string{"bench", "live", spec}, args...)...)
		if code != 2 || !strings.Contains(errs, args[0]) {
			t.Errorf("bench live %s: exit %d, stderr %q; want 2 naming %s", strings.Join(args, " "), code, errs, args[0])
		}
	}
}

// A spec that does not load is a usage error, naming its field.
func TestBenchLiveBadSpec(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("name: k\nevaluator: opencl\nproblems: [\"1\"]\nopencl: {kernel: k}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, "bench", "live", path); code != 2 || !strings.Contains(errs, "opencl.source") {
		t.Errorf("bench live with a bad spec: exit %d, stderr %q; want 2 naming opencl.source", code, errs)
	}
}
