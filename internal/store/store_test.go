package store_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

var (
	jobA = store.JobKey{Kernel: "sgemm", SpecHash: "h1", Problem: "1024,1024,1024", Device: "nvidia/NVIDIA A100-PCIE-40GB/sm80/driver-550"}
	jobB = store.JobKey{Kernel: "conv2d", SpecHash: "h2", Problem: "32x32", Device: "cpu/AMD EPYC 7B13/avx2/2c"}
	jobC = store.JobKey{Kernel: "sgemm", SpecHash: "h1", Problem: "512,512,512", Device: "cpu/AMD EPYC 7B13/avx2/2c"}
)

// at returns a fixed UTC time, i seconds into 2025.
func at(i int) time.Time { return time.Date(2025, 1, 1, 0, 0, i, 0, time.UTC) }

func trial(key string, ms float64) store.Trial {
	return store.Trial{Key: key, Status: "ok", TimeMS: ms, TimesMS: []float64{ms, ms * 1.01}, CostS: 0.25, At: at(int(ms)), Cycle: 1}
}

// openPath opens the store at path and closes it when the test ends.
func openPath(t *testing.T, path string, opt store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(path, opt)
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// rawUpdate edits the closed state file at path with bbolt directly.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatalf("raw update: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestJobKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    store.JobKey
		wantErr bool
	}{
		{in: jobA.String(), want: jobA},
		{in: "k|||", want: store.JobKey{Kernel: "k"}},
		{in: "k|h|p|cpu/x y/z", want: store.JobKey{Kernel: "k", SpecHash: "h", Problem: "p", Device: "cpu/x y/z"}},
		{in: "", wantErr: true},
		{in: "k|h|p", wantErr: true},
		{in: "k|h|p|d|e", wantErr: true},
		{in: "|h|p|d", wantErr: true},
	}
	for _, tt := range tests {
		got, err := store.ParseJobKey(tt.in)
		if tt.wantErr {
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ParseJobKey(%q) = %v, %v, want ErrInvalid", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseJobKey(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("ParseJobKey(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestInvalidJobKey(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	for _, job := range []store.JobKey{{}, {Kernel: "a|b"}, {Kernel: "k", Device: "x|y"}} {
		if _, err := s.AddTrials(job, []store.Trial{trial("1", 1)}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddTrials(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.Checkpoint(job, nil, []byte("p"), nil); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Checkpoint(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if _, err := s.NewCycle(job, store.Cycle{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("NewCycle(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.PutServed(job, store.Served{Key: "1"}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutServed(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.AddObservation(job, store.Observation{Key: "1"}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddObservation(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.PutCert(job, store.CertMeta{ID: "c", Key: "1"}, []byte("b")); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutCert(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.Promote(job, store.Served{Key: "1"}, store.CertMeta{ID: "c", Key: "1"}, []byte("b")); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Promote(%q) = %v, want ErrInvalid", job.String(), err)
		}
		if err := s.MarkTrial(job, "1", "wrong_result", ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("MarkTrial(%q) = %v, want ErrInvalid", job.String(), err)
		}
	}
	jobs, err := s.Jobs()
	if err != nil || len(jobs) != 0 {
		t.Errorf("Jobs() = %v, %v, want none", jobs, err)
	}
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	specs := []store.Spec{
		{Name: "sgemm", Hash: "aaa", Source: "/etc/quasim/kernels.d/sgemm.yaml", Raw: []byte("name: sgemm\n"), Loaded: at(1)},
		{Name: "sgemm", Hash: "bbb", Source: "/etc/quasim/kernels.d/sgemm.yaml", Raw: []byte("name: sgemm\nv: 2\n"), Loaded: at(3)},
		{Name: "sgemm", Hash: "ccc", Source: "builtin", Raw: []byte{0, 1, 2}, Loaded: at(2)},
		{Name: "axpy", Hash: "zzz", Source: "builtin", Raw: []byte(`{"name":"axpy"}`), Loaded: at(1)},
	}
	for _, sp := range specs {
		must(t, s.PutSpec(sp))
	}
	for _, want := range specs {
		got, err := s.Spec(want.Name, want.Hash)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Spec(%q, %q) = %+v, %v, want %+v", want.Name, want.Hash, got, err, want)
		}
	}
	for _, nh := range [][2]string{{"sgemm", "ddd"}, {"nope", "aaa"}, {"", ""}} {
		if _, err := s.Spec(nh[0], nh[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Spec(%q, %q) = %v, want ErrNotFound", nh[0], nh[1], err)
		}
	}
	got, err := s.Specs()
	if want := []store.Spec{specs[3], specs[1]}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Specs() = %+v, %v, want %+v", got, err, want)
	}
	if err := s.PutSpec(store.Spec{Name: "x"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("PutSpec(no hash) = %v, want ErrInvalid", err)
	}
}

func TestEmptyJob(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if got, err := s.Trials(jobA); err != nil || got == nil || len(got) != 0 {
		t.Errorf("Trials = %v, %v, want empty", got, err)
	}
	if got, err := s.HasTrial(jobA, "1"); err != nil || got {
		t.Errorf("HasTrial = %v, %v, want false", got, err)
	}
	if got, err := s.TrialCount(jobA); err != nil || got != 0 {
		t.Errorf("TrialCount = %v, %v, want 0", got, err)
	}
	if got, ok, err := s.Policy(jobA); err != nil || ok || got != nil {
		t.Errorf("Policy = %v, %v, %v, want none", got, ok, err)
	}
	if got, ok, err := s.Served(jobA); err != nil || ok || !reflect.DeepEqual(got, store.Served{}) {
		t.Errorf("Served = %v, %v, %v, want none", got, ok, err)
	}
	if got, err := s.Cycles(jobA); err != nil || len(got) != 0 {
		t.Errorf("Cycles = %v, %v, want empty", got, err)
	}
	if got, err := s.Observations(jobA, 0); err != nil || len(got) != 0 {
		t.Errorf("Observations = %v, %v, want empty", got, err)
	}
	if got, err := s.Specs(); err != nil || len(got) != 0 {
		t.Errorf("Specs = %v, %v, want empty", got, err)
	}
	if err := s.PutCycle(jobA, store.Cycle{ID: 1}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutCycle = %v, want ErrNotFound", err)
	}
	must(t, s.ResetPolicy(jobA))
	must(t, s.Checkpoint(jobA, nil, nil, nil))
	if n, err := s.AddTrials(jobA, nil); err != nil || n != 0 {
		t.Errorf("AddTrials(nil) = %d, %v, want 0", n, err)
	}
	if got, err := s.Jobs(); err != nil || len(got) != 0 {
		t.Errorf("Jobs = %v, %v, want none: nothing was written", got, err)
	}
}

func TestTrialsOrder(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	batches := [][]store.Trial{
		{trial("9", 9), trial("10", 10), trial("1", 1)},
		{trial("b", 2), trial("9", 99), trial("a", 3), trial("b", 4)},
		{},
		{trial("zz", 5)},
	}
	wantStored := []int{3, 2, 0, 1}
	for i, b := range batches {
		n, err := s.AddTrials(jobA, b)
		if err != nil || n != wantStored[i] {
			t.Errorf("AddTrials(batch %d) = %d, %v, want %d", i, n, err, wantStored[i])
		}
	}
	want := []store.Trial{trial("9", 9), trial("10", 10), trial("1", 1), trial("b", 2), trial("a", 3), trial("zz", 5)}
	got, err := s.Trials(jobA)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Trials = %+v, %v, want %+v", got, err, want)
	}
	if n, err := s.TrialCount(jobA); err != nil || n != len(want) {
		t.Errorf("TrialCount = %d, %v, want %d", n, err, len(want))
	}
	for _, tt := range []struct {
		key  string
		want bool
	}{{"9", true}, {"a", true}, {"zz", true}, {"c", false}, {"", false}} {
		if got, err := s.HasTrial(jobA, tt.key); err != nil || got != tt.want {
			t.Errorf("HasTrial(%q) = %v, %v, want %v", tt.key, got, err, tt.want)
		}
	}
	if got, err := s.Trials(jobB); err != nil || len(got) != 0 {
		t.Errorf("Trials(other job) = %v, %v, want empty", got, err)
	}
}

func TestTrialsManyKeepOrder(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	var want []store.Trial
	for i := 300; i > 0; i-- { // more than 256: an 8-byte key order beats one-byte order
		want = append(want, store.Trial{Key: fmt.Sprintf("%d,%d", i%7, i), Status: "ok", TimeMS: float64(i), At: at(i)})
	}
	if n, err := s.AddTrials(jobA, want); err != nil || n != len(want) {
		t.Fatalf("AddTrials = %d, %v, want %d", n, err, len(want))
	}
	got, err := s.Trials(jobA)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Trials: got %d trials, err %v; differ from the %d added", len(got), err, len(want))
	}
}

func TestCheckpoint(t *testing.T) {
	t.Parallel()
	oldPolicy := []byte("policy-0")
	tests := []struct {
		name       string
		trials     []store.Trial
		policy     []byte
		cycle      func(c store.Cycle) *store.Cycle // given the job's existing cycle 1
		wantErr    error
		wantTrials []store.Trial // after the preexisting trial "a"
		wantPolicy []byte
		wantCycle  func(c store.Cycle) store.Cycle
	}{
		{
			name:       "all parts",
			trials:     []store.Trial{trial("b", 2), trial("c", 3)},
			policy:     []byte("policy-1"),
			cycle:      func(c store.Cycle) *store.Cycle { c.Evals = 3; c.BestKey = "a"; return &c },
			wantTrials: []store.Trial{trial("b", 2), trial("c", 3)},
			wantPolicy: []byte("policy-1"),
			wantCycle:  func(c store.Cycle) store.Cycle { c.Evals = 3; c.BestKey = "a"; return c },
		},
		{
			name:       "duplicate keys skipped",
			trials:     []store.Trial{trial("a", 50), trial("b", 2), trial("b", 60)},
			wantTrials: []store.Trial{trial("b", 2)},
			wantPolicy: oldPolicy,
		},
		{
			name:       "empty policy replaces it",
			policy:     []byte{},
			wantPolicy: []byte{},
		},
		{
			name:       "unknown cycle rolls back",
			trials:     []store.Trial{trial("b", 2)},
			policy:     []byte("policy-1"),
			cycle:      func(c store.Cycle) *store.Cycle { c.ID = 99; return &c },
			wantErr:    store.ErrNotFound,
			wantPolicy: oldPolicy,
		},
		{
			name:       "cycle zero rolls back",
			trials:     []store.Trial{trial("b", 2)},
			cycle:      func(store.Cycle) *store.Cycle { return &store.Cycle{} },
			wantErr:    store.ErrNotFound,
			wantPolicy: oldPolicy,
		},
		{
			name:       "empty trial key rolls back",
			trials:     []store.Trial{trial("b", 2), {Status: "ok"}},
			policy:     []byte("policy-1"),
			wantErr:    store.ErrInvalid,
			wantPolicy: oldPolicy,
		},
		{
			name:       "unencodable trial rolls back",
			trials:     []store.Trial{trial("b", 2), {Key: "c", TimeMS: math.NaN()}},
			wantErr:    store.ErrInvalid,
			wantPolicy: oldPolicy,
		},
		{
			name:       "unencodable cycle rolls back",
			trials:     []store.Trial{trial("b", 2)},
			cycle:      func(c store.Cycle) *store.Cycle { c.BestMS = math.Inf(1); return &c },
			wantErr:    store.ErrInvalid,
			wantPolicy: oldPolicy,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			must(t, s.Checkpoint(jobA, []store.Trial{trial("a", 1)}, oldPolicy, nil))
			cy, err := s.NewCycle(jobA, store.Cycle{Trigger: "cron", State: "running", Started: at(0), Budget: 10})
			must(t, err)
			var arg *store.Cycle
			if tt.cycle != nil {
				arg = tt.cycle(cy)
			}
			err = s.Checkpoint(jobA, tt.trials, tt.policy, arg)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Checkpoint = %v, want %v", err, tt.wantErr)
			}
			want := append([]store.Trial{trial("a", 1)}, tt.wantTrials...)
			if got, err := s.Trials(jobA); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("Trials = %+v, %v, want %+v", got, err, want)
			}
			if got, ok, err := s.Policy(jobA); err != nil || !ok || string(got) != string(tt.wantPolicy) || got == nil {
				t.Errorf("Policy = %q, %v, %v, want %q", got, ok, err, tt.wantPolicy)
			}
			wantCy := cy
			if tt.wantCycle != nil {
				wantCy = tt.wantCycle(cy)
			}
			if got, err := s.Cycles(jobA); err != nil || !reflect.DeepEqual(got, []store.Cycle{wantCy}) {
				t.Errorf("Cycles = %+v, %v, want [%+v]", got, err, wantCy)
			}
		})
	}
}

func TestCheckpointRollbackLeavesNoJob(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	err := s.Checkpoint(jobB, []store.Trial{trial("a", 1)}, []byte("p"), &store.Cycle{ID: 1})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Checkpoint(unknown cycle) = %v, want ErrNotFound", err)
	}
	if jobs, err := s.Jobs(); err != nil || len(jobs) != 0 {
		t.Errorf("Jobs = %v, %v, want none", jobs, err)
	}
	if n, err := s.TrialCount(jobB); err != nil || n != 0 {
		t.Errorf("TrialCount = %d, %v, want 0", n, err)
	}
	if _, ok, err := s.Policy(jobB); err != nil || ok {
		t.Errorf("Policy: ok = %v, %v, want none", ok, err)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	p := []byte("state\x00\xff")
	must(t, s.Checkpoint(jobA, nil, p, nil))
	got, ok, err := s.Policy(jobA)
	if err != nil || !ok || string(got) != string(p) {
		t.Fatalf("Policy = %q, %v, %v, want %q", got, ok, err, p)
	}
	got[0] = 'X' // a copy: changing it changes nothing stored
	p[1] = 'Y'   // nor does changing the caller's slice after the call
	if again, _, _ := s.Policy(jobA); string(again) != "state\x00\xff" {
		t.Errorf("Policy after edits = %q, want %q", again, "state\x00\xff")
	}
	must(t, s.ResetPolicy(jobA))
	if got, ok, err := s.Policy(jobA); err != nil || ok || got != nil {
		t.Errorf("Policy after ResetPolicy = %q, %v, %v, want none", got, ok, err)
	}
	if jobs, err := s.Jobs(); err != nil || !reflect.DeepEqual(jobs, []store.JobKey{jobA}) {
		t.Errorf("Jobs = %v, %v, want [%v]", jobs, err, jobA)
	}
}

func TestCycles(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	var want []store.Cycle
	for i := range 300 {
		c := store.Cycle{Trigger: "cron", State: "running", Started: at(i), Budget: 100, BudgetS: 60, Strategy: "portfolio"}
		got, err := s.NewCycle(jobA, c)
		if err != nil || got.ID != i+1 {
			t.Fatalf("NewCycle #%d = %+v, %v, want ID %d", i+1, got, err, i+1)
		}
		c.ID = i + 1
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("NewCycle = %+v, want %+v", got, c)
		}
		want = append(want, c)
	}
	// The newest DefaultCyclesKept are kept.
	if err := s.PutCycle(jobA, want[41]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutCycle of cycle 42, beyond the %d kept = %v, want ErrNotFound", store.DefaultCyclesKept, err)
	}
	want = want[300-store.DefaultCyclesKept:]
	done := want[41]
	done.State, done.Ended, done.Evals, done.BestKey, done.BestMS, done.Promoted, done.Error = "done", at(1000), 100, "8,8", 1.25, "8,8", ""
	must(t, s.PutCycle(jobA, done))
	want[41] = done
	failed := want[len(want)-1]
	failed.State, failed.Error = "failed", "device lost"
	must(t, s.PutCycle(jobA, failed))
	want[len(want)-1] = failed
	for _, id := range []int{0, -1, 301} {
		if err := s.PutCycle(jobA, store.Cycle{ID: id}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PutCycle(ID %d) = %v, want ErrNotFound", id, err)
		}
	}
	if got, err := s.Cycles(jobA); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Cycles: %d cycles, %v; differ from the %d written", len(got), err, len(want))
	}
	if got, err := s.NewCycle(jobB, store.Cycle{Trigger: "api"}); err != nil || got.ID != 1 {
		t.Errorf("NewCycle(other job) = %+v, %v, want ID 1", got, err)
	}
}

func TestServed(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	for _, sv := range []store.Served{
		{Key: "8,8,2", TimeMS: 1.5, Cycle: 1, PromotedAt: at(10), Certificate: "cert-1"},
		{Key: "16,8,4", TimeMS: 1.25, Cycle: 2, PromotedAt: at(20)},
	} {
		must(t, s.PutServed(jobA, sv))
		if got, ok, err := s.Served(jobA); err != nil || !ok || !reflect.DeepEqual(got, sv) {
			t.Errorf("Served = %+v, %v, %v, want %+v", got, ok, err, sv)
		}
	}
	if _, ok, err := s.Served(jobB); err != nil || ok {
		t.Errorf("Served(other job): ok = %v, %v, want none", ok, err)
	}
}

func TestObservations(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	obs := []store.Observation{
		{At: at(5), LatencyMS: 1, Key: "a", Source: "runtime"},
		{At: at(3), LatencyMS: 2, Key: "a"},
		{At: at(5), LatencyMS: 3, Key: "b", Source: "pid 7"},
		{At: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), LatencyMS: 4, Key: "a"},
		{At: at(5), LatencyMS: 5, Key: "a"},
		{LatencyMS: 6, Key: "zero time"},
		{At: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), LatencyMS: 7, Key: "far"},
	}
	for _, o := range obs {
		must(t, s.AddObservation(jobA, o))
	}
	// By time; equal times in insertion order; the zero time first.
	all := []store.Observation{obs[5], obs[3], obs[1], obs[0], obs[2], obs[4], obs[6]}
	tests := []struct {
		limit int
		want  []store.Observation
	}{
		{0, all},
		{-1, all},
		{1, all[6:]},
		{3, all[4:]},
		{7, all},
		{100, all},
	}
	for _, tt := range tests {
		if got, err := s.Observations(jobA, tt.limit); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Observations(%d) = %+v, %v, want %+v", tt.limit, got, err, tt.want)
		}
	}
}

func TestJobs(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	jobD := store.JobKey{Kernel: "axpy", Problem: "1e6"}
	jobE := store.JobKey{Kernel: "zz", SpecHash: "h"}
	must(t, s.AddObservation(jobE, store.Observation{At: at(1), Key: "x"}))
	must(t, s.PutServed(jobC, store.Served{Key: "x"}))
	if _, err := s.NewCycle(jobB, store.Cycle{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTrials(jobA, []store.Trial{trial("1", 1)}); err != nil {
		t.Fatal(err)
	}
	must(t, s.Checkpoint(jobD, nil, []byte("p"), nil))
	must(t, s.Checkpoint(jobA, []store.Trial{trial("2", 2)}, []byte("p"), nil)) // again: listed once
	want := []store.JobKey{jobD, jobB, jobA, jobC, jobE}                        // by String()
	got, err := s.Jobs()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Jobs() = %v, %v, want %v", got, err, want)
	}
}

func TestOpenLocked(t *testing.T) {
	t.Parallel()
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("readonly=%v", readOnly), func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			start := time.Now()
			s2, err := store.Open(s.Path(), store.Options{LockTimeout: 100 * time.Millisecond, ReadOnly: readOnly})
			elapsed := time.Since(start)
			if err == nil {
				s2.Close()
				t.Fatal("second Open succeeded, want ErrLocked")
			}
			if !errors.Is(err, store.ErrLocked) {
				t.Errorf("second Open = %v, want ErrLocked", err)
			}
			want := "open " + s.Path() + ": state file is locked by another process (is another quasimd running?): store locked"
			if err.Error() != want {
				t.Errorf("second Open error = %q, want %q", err, want)
			}
			if elapsed >= 600*time.Millisecond {
				t.Errorf("second Open took %v, want about 100ms", elapsed)
			}
		})
	}
}

func TestOpenSchemaVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string
		want    error
	}{
		{"too new", "99", store.ErrSchemaTooNew},
		{"one newer", "8", store.ErrSchemaTooNew},
		{"not a number", "two", store.ErrCorrupt},
		{"zero", "0", store.ErrCorrupt},
		{"missing", "", store.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "quasim.db")
			rawUpdate(t, path, func(tx *bolt.Tx) error {
				r, err := tx.CreateBucket([]byte("v1"))
				if err != nil || tt.version == "" {
					return err
				}
				return r.Put([]byte("version"), []byte(tt.version))
			})
			for _, ro := range []bool{false, true} {
				s, err := store.Open(path, store.Options{ReadOnly: ro})
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("Open(readonly=%v) = %v, want %v", ro, err, tt.want)
				}
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "quasim.db")
	if _, err := store.Open(path, store.Options{ReadOnly: true}); err == nil {
		t.Error("read-only Open of a missing file succeeded")
	}
	s, err := store.Open(path, store.Options{})
	must(t, err)
	must(t, s.Checkpoint(jobA, []store.Trial{trial("a", 1)}, []byte("p"), nil))
	must(t, s.PutCert(jobA, store.CertMeta{ID: "c1", Key: "a"}, []byte("signed")))
	must(t, s.Close())

	r1 := openPath(t, path, store.Options{ReadOnly: true})
	r2 := openPath(t, path, store.Options{ReadOnly: true}) // readers share the lock
	for _, r := range []*store.Store{r1, r2} {
		if got, err := r.Trials(jobA); err != nil || len(got) != 1 {
			t.Errorf("read-only Trials = %v, %v, want 1 trial", got, err)
		}
	}
	writes := map[string]error{
		"Checkpoint":  r1.Checkpoint(jobA, nil, []byte("q"), nil),
		"ResetPolicy": r1.ResetPolicy(jobA),
		"PutSpec":     r1.PutSpec(store.Spec{Name: "n", Hash: "h"}),
		"PutCert":     r1.PutCert(jobA, store.CertMeta{ID: "c2", Key: "a"}, []byte("signed")),
		"Promote":     r1.Promote(jobA, store.Served{Key: "a"}, store.CertMeta{ID: "c1", Key: "a"}, []byte("signed")),
		"MarkTrial":   r1.MarkTrial(jobA, "a", "wrong_result", "x"),
		"ClearServed": r1.ClearServed(jobA),
	}
	if _, err := r1.Revoke("c1", "r", at(1)); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Revoke = %v, want ErrReadOnly", err)
	}
	if body, meta, err := r2.Cert("c1"); err != nil || string(body) != "signed" || meta.Revoked {
		t.Errorf("read-only Cert = %q, %+v, %v, want the live certificate", body, meta, err)
	}
	for name, err := range writes {
		if !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("read-only %s = %v, want ErrReadOnly", name, err)
		}
	}
	must(t, r1.Check())
}

func TestReadOnlyNeedsMigration(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "quasim.db")
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		r, err := tx.CreateBucket([]byte("v1"))
		if err != nil {
			return err
		}
		return r.Put([]byte("version"), []byte("1"))
	})
	if s, err := store.Open(path, store.Options{ReadOnly: true}); !errors.Is(err, store.ErrReadOnly) {
		if err == nil {
			s.Close()
		}
		t.Errorf("read-only Open of schema 1 = %v, want ErrReadOnly", err)
	}
}

// TestCorrupt breaks one stored value or key with raw bbolt and checks the
// reader reports ErrCorrupt naming it, without panicking.
func TestCorrupt(t *testing.T) {
	t.Parallel()
	bucket := func(tx *bolt.Tx, names ...string) *bolt.Bucket {
		b := tx.Bucket([]byte("v1"))
		for _, n := range names {
			b = b.Bucket([]byte(n))
		}
		return b
	}
	seq1 := []byte{0, 0, 0, 0, 0, 0, 0, 1}
	tests := []struct {
		name     string
		breakIt  func(tx *bolt.Tx) error
		read     func(s *store.Store) error
		wantName string // in the error message
		// skipped: read is a listing, which skips the record and reports
		// it to Options.OnCorrupt instead of failing.
		skipped bool
	}{
		{
			name:    "trial not json",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "seq").Put(seq1, []byte("{not json"))
			},
			read:     func(s *store.Store) error { _, err := s.Trials(jobA); return err },
			wantName: `v1/trials/"` + jobA.String() + `"/seq/1`,
		},
		{
			name:    "trial without v",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "seq").Put(seq1, []byte(`{"key":"a"}`))
			},
			read:     func(s *store.Store) error { _, err := s.Trials(jobA); return err },
			wantName: `v1/trials/"` + jobA.String() + `"/seq/1`,
		},
		{
			name:    "trial from the future",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "seq").Put(seq1, []byte(`{"v":2}`))
			},
			read:     func(s *store.Store) error { _, err := s.Trials(jobA); return err },
			wantName: `v1/trials/"` + jobA.String() + `"/seq/1`,
		},
		{
			name:    "trial seq key",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "seq").Put([]byte("x"), []byte(`{"v":1}`))
			},
			read:     func(s *store.Store) error { _, err := s.Trials(jobA); return err },
			wantName: `v1/trials/"` + jobA.String() + `"/seq/"x"`,
		},
		{
			name:     "cycle",
			skipped:  true,
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "cycles", jobA.String()).Put(seq1, []byte(`[]`)) },
			read:     func(s *store.Store) error { _, err := s.Cycles(jobA); return err },
			wantName: `v1/cycles/"` + jobA.String() + `"/1`,
		},
		{
			name:    "served",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "served").Put([]byte(jobA.String()), []byte(`{"v":1,"time_ms":"fast"}`))
			},
			read:     func(s *store.Store) error { _, _, err := s.Served(jobA); return err },
			wantName: `v1/served/"` + jobA.String() + `"`,
		},
		{
			name:    "observation",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "observations", jobA.String()).Put([]byte("k"), []byte{0xff})
			},
			read:     func(s *store.Store) error { _, err := s.Observations(jobA, 0); return err },
			wantName: `v1/observations/"` + jobA.String() + `"/6b`,
		},
		{
			name:     "spec",
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "specs", "sgemm").Put([]byte("aaa"), nil) },
			read:     func(s *store.Store) error { _, err := s.Spec("sgemm", "aaa"); return err },
			wantName: `v1/specs/"sgemm"/"aaa"`,
		},
		{
			name:     "spec list",
			skipped:  true,
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "specs", "sgemm").Put([]byte("bbb"), []byte("null")) },
			read:     func(s *store.Store) error { _, err := s.Specs(); return err },
			wantName: `v1/specs/"sgemm"/"bbb"`,
		},
		{
			name:     "cert not json",
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "certs").Put([]byte("c1"), []byte(`{"v":1,"body":`)) },
			read:     func(s *store.Store) error { _, _, err := s.Cert("c1"); return err },
			wantName: `v1/certs/"c1"`,
		},
		{
			name:    "cert of another id",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "certs").Put([]byte("c1"), []byte(`{"v":1,"meta":{"id":"c2"},"job":"k|||","body":"AA=="}`))
			},
			read:     func(s *store.Store) error { _, err := s.Certs(); return err },
			wantName: `v1/certs/"c1"`,
		},
		{
			name:    "cert job",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "certs").Put([]byte("c1"), []byte(`{"v":1,"meta":{"id":"c1"},"job":"k","body":"AA=="}`))
			},
			read:     func(s *store.Store) error { _, err := s.JobCerts(jobA); return err },
			wantName: `v1/certs/"c1"`,
		},
		{
			name: "cert without body",
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "certs").Put([]byte("c1"), []byte(`{"v":1,"meta":{"id":"c1"},"job":"k|||"}`))
			},
			read:     func(s *store.Store) error { _, _, err := s.Cert("c1"); return err },
			wantName: `v1/certs/"c1"`,
		},
		{
			name:    "cert indexed under another job",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "certs").Put([]byte("c1"), []byte(`{"v":1,"meta":{"id":"c1"},"job":"k|||","body":"AA=="}`))
			},
			read:     func(s *store.Store) error { _, err := s.JobCerts(jobA); return err },
			wantName: `v1/jobcerts/"` + jobA.String() + `"/"c1"`,
		},
		{
			name:     "cert index dangling",
			skipped:  true,
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "jobcerts", jobA.String()).Put([]byte("c9"), nil) },
			read:     func(s *store.Store) error { _, err := s.JobCerts(jobA); return err },
			wantName: `v1/jobcerts/"` + jobA.String() + `"/"c9"`,
		},
		{
			name: "revocation",
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "revocations").Put([]byte("c1"), []byte(`{"v":1,"revoked_at":0}`))
			},
			read:     func(s *store.Store) error { _, err := s.Revoke("c1", "again", at(2)); return err },
			wantName: `v1/revocations/"c1"`,
		},
		{
			name:     "marked trial missing",
			breakIt:  func(tx *bolt.Tx) error { return bucket(tx, "trials", jobA.String(), "seq").Delete(seq1) },
			read:     func(s *store.Store) error { return s.MarkTrial(jobA, "a", "wrong_result", "") },
			wantName: `v1/trials/"` + jobA.String() + `"/keys/"a"`,
		},
		{
			name: "marked trial index",
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "keys").Put([]byte("a"), []byte("x"))
			},
			read:     func(s *store.Store) error { return s.MarkTrial(jobA, "a", "wrong_result", "") },
			wantName: `v1/trials/"` + jobA.String() + `"/keys/"a"`,
		},
		{
			name: "marked trial of another key",
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "trials", jobA.String(), "seq").Put(seq1, []byte(`{"v":1,"key":"b"}`))
			},
			read:     func(s *store.Store) error { return s.MarkTrial(jobA, "a", "wrong_result", "") },
			wantName: `v1/trials/"` + jobA.String() + `"/keys/"a"`,
		},
		{
			name:    "job",
			skipped: true,
			breakIt: func(tx *bolt.Tx) error {
				return bucket(tx, "jobs").Put([]byte(jobA.String()), []byte(`{"v":1,"kernel":"other"}`))
			},
			read:     func(s *store.Store) error { _, err := s.Jobs(); return err },
			wantName: `v1/jobs/"` + jobA.String() + `"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "quasim.db")
			s, err := store.Open(path, store.Options{})
			must(t, err)
			must(t, s.Checkpoint(jobA, []store.Trial{trial("a", 1)}, []byte("p"), nil))
			must(t, s.PutSpec(store.Spec{Name: "sgemm", Hash: "aaa", Loaded: at(1)}))
			must(t, s.PutServed(jobA, store.Served{Key: "a"}))
			must(t, s.AddObservation(jobA, store.Observation{Key: "a", At: at(1)}))
			must(t, s.PutCert(jobA, store.CertMeta{ID: "c1", Key: "a", IssuedAt: at(1)}, []byte("signed")))
			if _, err := s.Revoke("c1", "first", at(1)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.NewCycle(jobA, store.Cycle{Trigger: "api"}); err != nil {
				t.Fatal(err)
			}
			must(t, s.Close())
			rawUpdate(t, path, tt.breakIt)
			var (
				mu       sync.Mutex
				reported []store.Corruption
			)
			s = openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, c)
			}})
			err = tt.read(s)
			if tt.skipped {
				if err != nil {
					t.Fatalf("listing = %v, want the corrupt record skipped", err)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(reported) != 1 || !errors.Is(reported[0].Err, store.ErrCorrupt) {
					t.Fatalf("reported %+v, want the one corrupt record", reported)
				}
				err = reported[0].Err
				if !strings.HasPrefix(reported[0].Where, "v1/") {
					t.Errorf("reported where %q, want a path in the file", reported[0].Where)
				}
			}
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("read = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tt.wantName) {
				t.Errorf("read error %q does not name %s", err, tt.wantName)
			}
			must(t, s.Check()) // the file itself is sound
		})
	}
}

func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(path, store.Options{})
	must(t, err)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	sp := store.Spec{Name: "sgemm", Hash: "h1", Source: "builtin", Raw: []byte("raw"), Loaded: at(1)}
	must(t, s.PutSpec(sp))
	cy, err := s.NewCycle(jobA, store.Cycle{Trigger: "start", State: "running", Started: at(2), Budget: 8})
	must(t, err)
	trials := []store.Trial{trial("1,1", 3), {Key: "2,2", Status: "compile", Error: "nvcc: bad tile", CostS: 0.5, At: at(4)}}
	cy.State, cy.Ended, cy.Evals = "done", at(9), 2
	must(t, s.Checkpoint(jobA, trials, []byte("policy"), &cy))
	sv := store.Served{Key: "1,1", TimeMS: 3, Cycle: cy.ID, PromotedAt: at(10), Certificate: "c"}
	must(t, s.PutServed(jobA, sv))
	ob := store.Observation{At: at(11), LatencyMS: 3.1, Key: "1,1", Source: "runtime"}
	must(t, s.AddObservation(jobA, ob))
	cm := store.CertMeta{ID: "c", Job: jobB, Key: "1,1", TimeMS: 2.9, IssuedAt: at(12)}
	must(t, s.PutCert(jobB, cm, []byte("signed\x00")))
	cm, err = s.Revoke("c", "superseded", at(13))
	must(t, err)
	must(t, s.MarkTrial(jobA, "2,2", "wrong_result", "checksum"))
	trials[1].Status, trials[1].Error = "wrong_result", "checksum"
	must(t, s.Close())

	s = openPath(t, path, store.Options{})
	if v, err := s.SchemaVersion(); err != nil || v != 7 {
		t.Errorf("SchemaVersion() = %d, %v, want 7", v, err)
	}
	if got, err := s.Spec("sgemm", "h1"); err != nil || !reflect.DeepEqual(got, sp) {
		t.Errorf("Spec = %+v, %v, want %+v", got, err, sp)
	}
	if got, err := s.Trials(jobA); err != nil || !reflect.DeepEqual(got, trials) {
		t.Errorf("Trials = %+v, %v, want %+v", got, err, trials)
	}
	if got, ok, err := s.Policy(jobA); err != nil || !ok || string(got) != "policy" {
		t.Errorf("Policy = %q, %v, %v", got, ok, err)
	}
	if got, err := s.Cycles(jobA); err != nil || !reflect.DeepEqual(got, []store.Cycle{cy}) {
		t.Errorf("Cycles = %+v, %v, want [%+v]", got, err, cy)
	}
	if got, ok, err := s.Served(jobA); err != nil || !ok || !reflect.DeepEqual(got, sv) {
		t.Errorf("Served = %+v, %v, %v, want %+v", got, ok, err, sv)
	}
	if got, err := s.Observations(jobA, 0); err != nil || !reflect.DeepEqual(got, []store.Observation{ob}) {
		t.Errorf("Observations = %+v, %v, want [%+v]", got, err, ob)
	}
	if got, err := s.Jobs(); err != nil || !reflect.DeepEqual(got, []store.JobKey{jobB, jobA}) {
		t.Errorf("Jobs = %v, %v, want [%v %v]", got, err, jobB, jobA)
	}
	if body, got, err := s.Cert("c"); err != nil || string(body) != "signed\x00" || !reflect.DeepEqual(got, cm) || !got.Revoked {
		t.Errorf("Cert = %q, %+v, %v, want the revoked %+v", body, got, err, cm)
	}
	if _, err := s.NewCycle(jobA, store.Cycle{}); err != nil {
		t.Error(err)
	}
	if got, _ := s.Cycles(jobA); len(got) != 2 || got[1].ID != 2 {
		t.Errorf("after reopen, NewCycle gave cycles %+v, want IDs 1 and 2", got)
	}
	must(t, s.Check())
}

func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	jobs := []store.JobKey{jobA, jobB, jobC}
	var wg sync.WaitGroup
	for _, job := range jobs {
		for w := range 2 {
			wg.Go(func() {
				for i := range 20 {
					// Both writers of a job add the same keys: each lands once.
					tr := []store.Trial{trial(fmt.Sprint(i), float64(i+1)), trial(fmt.Sprintf("%d-%d", w, i), 1)}
					if err := s.Checkpoint(job, tr, []byte{byte(i)}, nil); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Trials(job); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for _, job := range jobs {
		if n, err := s.TrialCount(job); err != nil || n != 60 {
			t.Errorf("TrialCount(%q) = %d, %v, want 60", job.String(), n, err)
		}
	}
}

func TestAddObservationsKeepsNewest(t *testing.T) {
	st := storetest.New(t)
	job := store.JobKey{Kernel: "k", SpecHash: "h", Problem: "1", Device: "d"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var obs []store.Observation
	for i := range 30 {
		obs = append(obs, store.Observation{At: t0.Add(time.Duration(i) * time.Second), LatencyMS: float64(i), Key: "a"})
	}
	if err := st.AddObservations(job, obs[:20], 25); err != nil {
		t.Fatal(err)
	}
	if err := st.AddObservations(job, obs[20:], 25); err != nil {
		t.Fatal(err)
	}
	got, err := st.Observations(job, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || got[0].LatencyMS != 5 || got[24].LatencyMS != 29 {
		t.Fatalf("kept %d observations, %v .. %v; want the newest 25 (5..29)", len(got), got[0].LatencyMS, got[len(got)-1].LatencyMS)
	}
}

// An error opening the state file names its path once, not "open X: open
// X: ...".
func TestOpenErrorNamesPathOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "quasim.db") // under a file: not a directory
	_, err := store.Open(path, store.Options{})
	if err == nil || strings.Count(err.Error(), path) != 1 {
		t.Errorf("Open = %v, want an error naming %s once", err, path)
	}
}
