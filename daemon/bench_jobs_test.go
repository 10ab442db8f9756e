package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/tuner"
)

// BenchmarkLookupJobs times GET /v1/configs over the real socket for a
// kernel of N jobs: half on one device class, each serving a config, half
// on another, serving none. exact asks a served job's problem, nearest a
// problem between two of them, default a problem of the other device
// class (its own job serves nothing and no job near it does). Each lookup
// asks a problem the one before did not, and the kernel's cached answers
// are dropped before each (out of the timing), as a cycle's end does: what
// is timed is the answer made from the index. cached repeats one exact
// query, which the answer cache serves.
//
//	go test ./daemon -run '^$' -bench LookupJobs -benchtime 2000x
func BenchmarkLookupJobs(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			ts, probs := newJobsServer(b, n)
			heap := func() float64 {
				goruntime.GC()
				var m goruntime.MemStats
				goruntime.ReadMemStats(&m)
				return float64(m.HeapAlloc) / (1 << 20)
			}
			before := heap()
			k, _ := ts.sched.kernel("bench")
			if _, err := ts.sched.index.kernel(ts.st, k); err != nil {
				b.Fatal(err)
			}
			b.Logf("the index of %d jobs holds %.1f MiB", n, heap()-before)
			conn, err := net.Dial("unix", ts.socket)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			get := func(path string) {
				if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: quasimd\r\n\r\n", path); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
				}
			}
			kinds := []struct {
				name string
				path func(i int) string
				drop bool
			}{
				{"exact", func(i int) string { return fmt.Sprintf("/v1/configs/bench?problem=%d", probs[i%len(probs)]) }, true},
				{"nearest", func(i int) string {
					return fmt.Sprintf("/v1/configs/bench?problem=%d", probs[i%len(probs)]+1)
				}, true},
				{"default", func(i int) string {
					return fmt.Sprintf("/v1/configs/bench?problem=%d&device=cpu/bench-b", probs[i%len(probs)])
				}, true},
				{"cached", func(int) string { return fmt.Sprintf("/v1/configs/bench?problem=%d", probs[0]) }, false},
			}
			for _, kind := range kinds {
				b.Run(kind.name, func(b *testing.B) {
					get(kind.path(0)) // the index is built
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						path := kind.path(i + 1)
						if kind.drop {
							ts.sched.index.dropAnswers("bench")
						}
						t0 := time.Now()
						get(path)
						lat = append(lat, time.Since(t0))
					}
					b.StopTimer()
					b.ReportMetric(float64(percentile(lat, 0.50).Nanoseconds())/1e3, "p50_us")
					b.ReportMetric(float64(percentile(lat, 0.99).Nanoseconds())/1e3, "p99_us")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

// dropAnswers forgets the answers cached for kernel name, as a change to
// one of its jobs does.
func (x *lookupIndex) dropAnswers(name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ki := x.kernels[name]; ki != nil {
		ki.answers = nil
	}
}

// newJobsServer serves a kernel "bench" of n jobs made from the builtin
// reduce kernel's first job, at problems 1000, 1002, ...: the first n/2
// (at least one) on device cpu/bench-a, each serving a config with its
// trial and a trial of its default, the rest on cpu/bench-b. It returns
// the served problems.
func newJobsServer(b *testing.B, n int) (*testServer, []int) {
	dir, st := shmStore(b)
	ts := newTestServerOn(b, dir+"/none", st)
	reduce, ok := ts.sched.kernel("reduce")
	if !ok {
		b.Fatal("no builtin reduce")
	}
	tmpl := reduce.jobs[0]
	sp := *reduce.spec
	sp.Name, sp.TuneOnMiss = "bench", false
	k := &kernel{spec: &sp}
	all := tmpl.spec.Space.All()
	served := tmpl.spec.Space.Key(all[len(all)/2])
	def := defaultKey(tmpl)
	var probs []int
	start := time.Now()
	for i := range n {
		device := "cpu/bench-b"
		if i < max(n/2, 1) {
			device = "cpu/bench-a"
		}
		p := 1000 + 2*i
		sj := tmpl.spec
		key := store.JobKey{Kernel: "bench", SpecHash: sp.Hash, Problem: fmt.Sprint(p), Device: device}
		k.jobs = append(k.jobs, &job{key: key, kern: k, spec: sj})
		if device != "cpu/bench-a" {
			continue
		}
		probs = append(probs, p)
		at := time.Unix(1700000000, 0).UTC()
		trials := []store.Trial{
			{Key: def, Status: "ok", TimeMS: 2, TimesMS: []float64{2, 2.01, 1.99}, At: at, Cycle: 1},
			{Key: served, Status: "ok", TimeMS: 1.25, TimesMS: []float64{1.25, 1.26, 1.24}, At: at, Cycle: 1},
		}
		if _, err := st.AddTrials(key, trials); err != nil {
			b.Fatal(err)
		}
		if err := st.PutServed(key, store.Served{Key: served, TimeMS: 1.25, Cycle: 1, PromotedAt: at}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d jobs stored in %v", n, time.Since(start).Round(time.Millisecond))
	ts.sched.mu.Lock()
	ts.sched.kernels["bench"] = k
	ts.sched.mu.Unlock()
	return ts, probs
}

// BenchmarkLoadJobs times what a start does for a spec of N problems
// (99,000 is about the most a spec file holds: the YAML reader refuses
// more than 100,000 values): read and build the kernel's jobs (load),
// schedule them and check which need a first cycle (apply), start cron,
// and build the lookup index; each job serves a config, as after the
// first cycles.
//
//	go test ./daemon -run '^$' -bench LoadJobs -benchtime 1x
func BenchmarkLoadJobs(b *testing.B) {
	for _, n := range []int{1000, 10000, 99000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			dir, st := shmStore(b)
			specDir := dir + "/kernels"
			if err := os.Mkdir(specDir, 0o755); err != nil {
				b.Fatal(err)
			}
			var spec strings.Builder
			spec.WriteString("name: bench\nevaluator: builtin:reduce\nschedule: \"@every 6h\"\nproblems:\n")
			for i := range n {
				fmt.Fprintf(&spec, "  - \"%d\"\n", 1000+2*i)
			}
			if err := os.WriteFile(specDir+"/bench.yaml", []byte(spec.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			sched := &scheduler{
				dir: specDir, st: st, cron: newCron(), log: zerolog.Nop(), clock: time.Now,
				tn: tuner.New(tuner.Config{Store: st, NewStrategy: defaultStrategy}),
			}
			ks, _, errs := sched.load()
			if len(errs) > 0 || ks["bench"] == nil {
				b.Fatalf("load: %v", errs)
			}
			for _, j := range ks["bench"].jobs {
				if err := st.PutServed(j.key, store.Served{Key: defaultKey(j), TimeMS: 1, Cycle: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				ks, ps, errs := sched.load()
				loaded := time.Since(t0)
				sched.apply(ks, ps, errs)
				applied := time.Since(t0)
				sched.cron.Start()
				sched.cron.Entries() // waits for the first sort of the entries
				started := time.Since(t0)
				if _, err := sched.index.kernel(st, ks["bench"]); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(loaded.Seconds(), "load_s")
				b.ReportMetric((applied - loaded).Seconds(), "apply_s")
				b.ReportMetric((started - applied).Seconds(), "cron_s")
				b.ReportMetric((time.Since(t0) - started).Seconds(), "index_s")
				b.ReportMetric(time.Since(t0).Seconds(), "total_s")
				sched.cron.Stop()
			}
		})
	}
}

// shmStore opens a store on /dev/shm where there is one, as writing
// 100,000 jobs with an fsync each would take minutes on a disk.
func shmStore(b *testing.B) (string, *store.Store) {
	dir := b.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err = os.MkdirTemp("/dev/shm", "quasim-bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	st, err := store.Open(dir+"/quasim.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return dir, st
}

// BenchmarkKernelsListing times GET /v1/kernels with sgemm's 256,256,256
// job holding a trial of each of its configs (3,024; at most 18,000), of
// 20 timed runs each, and serving one of them.
//
//	go test ./daemon -run '^$' -bench KernelsListing -benchtime 20x
func BenchmarkKernelsListing(b *testing.B) {
	_, st := shmStore(b)
	ts := newTestServerOn(b, b.TempDir()+"/none", st)
	k, _ := ts.sched.kernel("sgemm")
	var j *job
	for _, jj := range k.jobs {
		if jj.key.Problem == "256,256,256" {
			j = jj
		}
	}
	all := j.spec.Space.All()
	n := min(len(all), 18000)
	at := time.Unix(1700000000, 0).UTC()
	for lo := 0; lo < n; lo += 1000 {
		var trials []store.Trial
		for i := lo; i < min(n, lo+1000); i++ {
			t := store.Trial{Key: j.spec.Space.Key(all[i]), Status: "ok", TimeMS: 1 + float64(i)/float64(n), CostS: 0.1, At: at, Cycle: 1}
			for r := range 20 {
				t.TimesMS = append(t.TimesMS, t.TimeMS+float64(r)/1000)
			}
			trials = append(trials, t)
		}
		if _, err := st.AddTrials(j.key, trials); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.PutServed(j.key, store.Served{Key: j.spec.Space.Key(all[0]), TimeMS: 1, PromotedAt: at}); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d trials", n)
	b.ResetTimer()
	for range b.N {
		if status, body := ts.get(b, "/v1/kernels", nil); status != 200 {
			b.Fatalf("GET /v1/kernels = %d %s", status, body)
		}
	}
}
