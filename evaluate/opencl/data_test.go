package opencl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/testload"
)

func writeNPY(t *testing.T, dir, name string, xs []float64) string {
	t.Helper()
	a := Array{Type: "float", Len: len(xs), Bytes: make([]byte, 4*len(xs))}
	for i, x := range xs {
		put(a.Bytes, Types["float"], i, x)
	}
	b, err := WriteNPY(a)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDataAnswers runs a kernel as Kernel Tuner's interface hands it over:
// arguments from .npy files, outputs checked against answer files with
// numpy.allclose's rule, a parameter named read_only; and without an
// answer, unchecked.
func TestDataAnswers(t *testing.T) {
	needDevice(t)
	dir := t.TempDir()
	const n = 1000
	x, want, wrong := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i%17) / 4
		want[i] = 2 * x[i]
		wrong[i] = 2*x[i] + 1
	}
	src, err := filepath.Abs("testdata/twice.cl")
	if err != nil {
		t.Fatal(err)
	}
	k := Kernel{
		Name: "twice", Sources: []string{src}, Kernel: "twice",
		Params:      []Param{{Name: "block_size_x", Values: []any{32, 64}}, {Name: "read_only", Values: []any{1, 0}}},
		ProblemSize: []string{"1000"},
		Args: []Arg{
			{Name: "y", Type: "float", Size: "1000", Output: true, Answer: writeNPY(t, dir, "y.npy", want)},
			{Name: "x", Type: "float", Size: "1000", Data: writeNPY(t, dir, "x.npy", x)},
			{Name: "n", Type: "int", Value: "1000"},
		},
		Check: Check{AllClose: true, Abs: 1e-6, Rel: 1e-5},
	}
	run := func(k Kernel, cfgs ...genome.Config) []evaluate.Trial {
		t.Helper()
		ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		var out []evaluate.Trial
		for _, c := range cfgs {
			tr, err := ev.Evaluate(context.Background(), c, evaluate.Problem{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr)
		}
		return out
	}
	trs := run(k, genome.Config{0, 0}, genome.Config{1, 1})
	if !trs[0].OK() || trs[1].Status != evaluate.StatusWrongResult || !strings.Contains(trs[1].Error, "got 1.0, want 0.0") {
		t.Errorf("with answers: %s %q, %s %q; want ok, then wrong_result at [0]", trs[0].Status, trs[0].Error, trs[1].Status, trs[1].Error)
	}
	// No output marked: nothing to compare, every config runs.
	k.Args[0].Output, k.Args[0].Answer = false, ""
	if trs := run(k, genome.Config{1, 1}); !trs[0].OK() {
		t.Errorf("unchecked: %s %q, want ok", trs[0].Status, trs[0].Error)
	}
	// Data of the wrong length fails every run, naming the argument.
	k.Args[1].Data = writeNPY(t, dir, "short.npy", x[:10])
	if trs := run(k, genome.Config{0, 0}); trs[0].Status != evaluate.StatusRuntime || !strings.Contains(trs[0].Error, "args[1] (x).data: ") || !strings.Contains(trs[0].Error, "holds 10 elements, the argument's size is 1000") {
		t.Errorf("short data: %s %q", trs[0].Status, trs[0].Error)
	}
}

// TestResetKeepsConstInputs runs a kernel that adds a const input into
// a buffer it reads and writes, config after config, each checked against
// its answer: the written buffer starts from its data at every run (a
// stale one would hold y + 2x by the second), the const one is written
// once and kept.
func TestResetKeepsConstInputs(t *testing.T) {
	needDevice(t)
	dir := t.TempDir()
	const n = 1000
	y, x, want := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		y[i], x[i] = 1, float64(i%13)
		want[i] = y[i] + x[i]
	}
	src, err := filepath.Abs("testdata/accumulate.cl")
	if err != nil {
		t.Fatal(err)
	}
	k := Kernel{
		Name: "accumulate", Sources: []string{src}, Kernel: "accumulate",
		Params:      []Param{{Name: "block_size_x", Values: []any{32, 64, 128}}},
		ProblemSize: []string{"1000"},
		Args: []Arg{
			{Name: "y", Type: "float", Size: "1000", Output: true, Data: writeNPY(t, dir, "y.npy", y), Answer: writeNPY(t, dir, "want.npy", want)},
			{Name: "x", Type: "float", Size: "1000", Data: writeNPY(t, dir, "x.npy", x)},
			{Name: "n", Type: "int", Value: "1000"},
		},
		Check: Check{AllClose: true, Abs: 1e-6, Rel: 1e-5},
	}
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for _, c := range []genome.Config{{0}, {1}, {2}, {0}} {
		tr, err := ev.Evaluate(context.Background(), c, evaluate.Problem{})
		if err != nil || !tr.OK() {
			t.Errorf("config %v: %s %q (%v); want ok, each run from y's data", c, tr.Status, tr.Error, err)
		}
	}
}

func TestConstPointee(t *testing.T) {
	for decl, want := range map[string]bool{
		"__global const float *a":           true,
		"const __global float* restrict a":  true,
		"__global float const *a":           true,
		"__constant float *c":               true,
		"constant float4 *c":                true,
		"__global float *y":                 false,
		"__global float *const y":           false,
		"const int n":                       false,
		"__global DATA_T *in":               false,
		"__global float *restrict constant": false,
	} {
		if got := ConstPointee(decl); got != want {
			t.Errorf("ConstPointee(%q) = %v, want %v", decl, got, want)
		}
	}
}

// TestVerifySocket judges outputs by a listener on a Unix socket, as
// quasim's Python package serves a Kernel Tuner verify function: it gets
// the config and each output as a .npy file, and its verdict is the trial's.
func TestVerifySocket(t *testing.T) {
	needDevice(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "v.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req verifyRequest
			json.NewDecoder(c).Decode(&req)
			a, err := ReadNPY(req.Outputs["0"])
			ok := err == nil && a.Len == 1000 && get(a.Bytes, Types["float"], 3) == 6 // 2 x[3]
			json.NewEncoder(c).Encode(verifyAnswer{OK: ok, Error: fmt.Sprintf("read_only %v", req.Config["read_only"])})
			c.Close()
		}
	}()
	src, err := filepath.Abs("testdata/twice.cl")
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 1000)
	for i := range x {
		x[i] = float64(i)
	}
	k := Kernel{
		Name: "twice", Sources: []string{src}, Kernel: "twice",
		Params:      []Param{{Name: "block_size_x", Values: []any{32}}, {Name: "read_only", Values: []any{1, 0}}},
		ProblemSize: []string{"1000"},
		Args: []Arg{
			{Name: "y", Type: "float", Size: "1000", Output: true},
			{Name: "x", Type: "float", Size: "1000", Data: writeNPY(t, dir, "x.npy", x)},
			{Name: "n", Type: "int", Value: "1000"},
		},
		Check: Check{Verify: sock},
	}
	ev, err := New(k, Options{Worker: workerCmd(), Timeout: testload.Scale(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for _, tt := range []struct {
		cfg    genome.Config
		status evaluate.Status
		note   string
	}{{genome.Config{0, 0}, evaluate.StatusOK, ""}, {genome.Config{0, 1}, evaluate.StatusWrongResult, "read_only 0"}} {
		tr, err := ev.Evaluate(context.Background(), tt.cfg, evaluate.Problem{})
		if err != nil || tr.Status != tt.status || !strings.Contains(tr.Error, tt.note) {
			t.Errorf("Evaluate(%v) = %s %q, %v; want %s %q", tt.cfg, tr.Status, tr.Error, err, tt.status, tt.note)
		}
	}
}

// TestReadDataMapped: readData gives a file's elements whether it maps
// the file (Linux) or reads it, and an empty file is an error, not a
// failed mapping.
func TestReadDataMapped(t *testing.T) {
	dir := t.TempDir()
	b := make([]byte, 3*4)
	for i := range 3 {
		put(b, Types["float"], i, float64(i)+0.5)
	}
	f, err := WriteNPY(Array{Type: "float", Len: 3, Bytes: b})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.npy")
	if err := os.WriteFile(path, f, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readData(path, "float", 3)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("readData = %v, %v; want %v", got, err, b)
	}
	if _, err := readData(path, "float", 4); err == nil || !strings.Contains(err.Error(), "holds 3 elements") {
		t.Errorf("readData of 4 elements = %v, want the count named", err)
	}
	empty := filepath.Join(dir, "empty.npy")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readData(empty, "float", 3); err == nil || !strings.Contains(err.Error(), "not a .npy file") {
		t.Errorf("readData of an empty file = %v, want it named not a .npy file", err)
	}
}
