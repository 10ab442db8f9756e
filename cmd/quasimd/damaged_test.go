package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/testload"
)

// goodState runs quasimd until the reduce job is served after two cycles,
// stops it, and returns the directory and the state file's bytes.
func goodState(t *testing.T) (string, []byte) {
	t.Helper()
	dir := newDir(t, map[string]string{"reduce.yaml": reduceSpec})
	d := start(t, dir)
	waitServed(t, d, "65536")
	if out, errs, code := d.ctl("tune", "reduce", "--problem", "65536", "--budget", "6", "--wait"); code != 0 {
		t.Fatalf("tune: %d %s %s", code, out, errs)
	}
	d.stop()
	data, err := os.ReadFile(filepath.Join(dir, "state", "quasim.db"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data
}

// runDaemon starts quasimd on dir and returns its exit code and stderr if
// it exits before it serves, or -1 once it serves (it is then killed).
func runDaemon(t *testing.T, dir string) (int, string) {
	t.Helper()
	qd, _ := binaries(t)
	sockDir, err := os.MkdirTemp("", "qs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	cmd := exec.Command(qd, "--socket", filepath.Join(sockDir, "q.sock"), "--state-dir", filepath.Join(dir, "state"),
		"--kernels", filepath.Join(dir, "kernels.d"), "--idle-cpu", "0", "--lock-dir", filepath.Join(sockDir, "locks"))
	return serveOrExit(t, cmd, filepath.Join(sockDir, "q.sock"))
}

// serveOrExit runs cmd, a quasimd serving on sock, and returns its exit
// code and stderr if it exits before it serves, or -1 once it serves (it
// is then killed).
func serveOrExit(t *testing.T, cmd *exec.Cmd, sock string) (int, string) {
	t.Helper()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testload.Scale(30 * time.Second))
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), errb.String()
			}
			return 0, errb.String()
		case <-tick.C:
			if _, err := os.Stat(sock); err != nil {
				continue
			}
		case <-deadline:
		}
		// Serving, or neither serving nor exited after 30 s.
		cmd.Process.Kill()
		<-done
		return -1, errb.String()
	}
}

// noCrash fails the test when quasimd's output shows a panic or a
// goroutine dump.
func noCrash(t *testing.T, what, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("%s: quasimd crashed:\n%s", what, tail(stderr, 3000))
	}
}

// TestDamagedStateFile: quasimd refuses a truncated state file with a
// clear message and exit code exitDamaged, without writing to it; quasimctl db check
// finds the damage and db salvage makes a file quasimd starts on.
func TestDamagedStateFile(t *testing.T) {
	t.Parallel()
	dir, good := goodState(t)
	db := filepath.Join(dir, "state", "quasim.db")
	bad := good[:12<<10]
	if err := os.WriteFile(db, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr := runDaemon(t, dir)
	noCrash(t, "truncated", stderr)
	if code != exitDamaged || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "truncated") || !strings.Contains(stderr, "db salvage") {
		t.Fatalf("quasimd on a truncated state file: exit %d, want %d with what is wrong and how to recover:\n%s", code, exitDamaged, tail(stderr, 3000))
	}
	if now, _ := os.ReadFile(db); !bytes.Equal(now, bad) {
		t.Errorf("quasimd wrote to the damaged state file")
	}

	_, qc := binaries(t)
	ctl := func(args ...string) (string, int) {
		cmd := exec.Command(qc, args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("quasimctl %v: %v", args, err)
		}
		return string(out), 0
	}
	if out, code := ctl("db", "check", "--state-dir", filepath.Join(dir, "state")); code != 1 || !strings.Contains(out, "DAMAGED") {
		t.Errorf("quasimctl db check of the truncated file: exit %d:\n%s", code, out)
	}
	// A file with a sound structure but one corrupt cycle record.
	if err := os.WriteFile(db, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := ctl("db", "check", "--db", db); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("quasimctl db check of a sound file: exit %d:\n%s", code, out)
	}
	newFile := filepath.Join(dir, "new.db")
	out, code := ctl("db", "salvage", "--db", db, "--to", newFile)
	if code != 0 || !strings.Contains(out, "trials") {
		t.Fatalf("quasimctl db salvage: exit %d:\n%s", code, out)
	}
	if err := os.Rename(newFile, db); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir)
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	if len(ks) != 1 || len(ks[0].Jobs) == 0 || ks[0].Jobs[0].Trials == 0 {
		t.Errorf("kernels after salvage: %+v", ks)
	}
	d.stop()
}

// TestFlippedStateFile: after 200 random byte flips quasimd either refuses
// the file (exitDamaged, a message, no panic) or starts, and then kernels and
// cycles answer.
func TestFlippedStateFile(t *testing.T) {
	t.Parallel()
	dir, good := goodState(t)
	db := filepath.Join(dir, "state", "quasim.db")
	refused, started := 0, 0
	for seed := range uint64(8) {
		data := bytes.Clone(good)
		rng := rand.New(rand.NewPCG(seed, 11))
		for range 200 {
			data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
		}
		if err := os.WriteFile(db, data, 0o600); err != nil {
			t.Fatal(err)
		}
		code, stderr := runDaemon(t, dir)
		noCrash(t, "flipped", stderr)
		switch code {
		case exitDamaged:
			if !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "db salvage") {
				t.Errorf("seed %d: refused without saying why and how to recover:\n%s", seed, tail(stderr, 2000))
			}
			if now, _ := os.ReadFile(db); !bytes.Equal(now, data) {
				t.Errorf("seed %d: quasimd wrote to the damaged state file", seed)
			}
			refused++
		case -1:
			d := start(t, dir)
			for _, args := range [][]string{{"kernels"}, {"cycles", "reduce"}} {
				if out, errs, code := d.ctl(args...); code != 0 {
					t.Errorf("seed %d: quasimctl %v: exit %d %s %s", seed, args, code, out, errs)
				}
			}
			d.stop()
			started++
		default:
			t.Errorf("seed %d: quasimd exited %d:\n%s", seed, code, tail(stderr, 2000))
		}
	}
	t.Logf("%d of 8 flipped files refused, %d started", refused, started)
	if refused == 0 {
		t.Errorf("no file with 200 flipped bytes was refused")
	}
}

// TestCorruptRecord: one cycle record that does not decode costs that
// record: cycles lists the others, and the metric counts it.
func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	dir, _ := goodState(t)
	path := filepath.Join(dir, "state", "quasim.db")
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var before int
	err = bdb.Update(func(tx *bolt.Tx) error {
		cycles := tx.Bucket([]byte("v1")).Bucket([]byte("cycles"))
		return cycles.ForEachBucket(func(job []byte) error {
			b := cycles.Bucket(job)
			before = b.Stats().KeyN
			return b.Put([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte(`{"v":1,"id":`))
		})
	})
	bdb.Close()
	if err != nil || before < 2 {
		t.Fatalf("corrupting cycle 1: %v (%d cycles)", err, before)
	}
	d := start(t, dir)
	var cys api.Cycles
	d.ctlJSON(&cys, "cycles", "reduce")
	if len(cys.Cycles) != before-1 {
		t.Errorf("cycles lists %d, want the %d that decode", len(cys.Cycles), before-1)
	}
	var ks []api.Kernel
	d.ctlJSON(&ks, "kernels")
	code, body := d.rawGet("/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, m := range fams["quasim_store_corrupt_records_total"].GetMetric() {
		if label(m, "bucket") == "cycles" {
			n += m.GetCounter().GetValue()
		}
	}
	if n < 1 {
		t.Errorf("quasim_store_corrupt_records_total{bucket=cycles} = %v, want at least 1", n)
	}
	d.stop()
}
