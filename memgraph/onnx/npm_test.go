package onnx

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/memgraph"
)

// npmModel is one line of testdata/npm-models.txt.
type npmModel struct {
	pkg, path, sha string
	dims           map[string]int64
	values         map[string][]int64 // value:NAME=V[,V...]
}

func (m npmModel) file(dir string) string {
	return filepath.Join(dir, strings.ReplaceAll(m.pkg, "/", "+"), "package", m.path)
}

// name is the model's file name, and NAMEV for each input value given
// (regen.sh names its graph the same: silero_vad_v5_sr16000).
func (m npmModel) name() string {
	n := strings.TrimSuffix(filepath.Base(m.path), ".onnx")
	for _, k := range slices.Sorted(maps.Keys(m.values)) {
		n += "_" + k
		for _, v := range m.values[k] {
			n += strconv.FormatInt(v, 10)
		}
	}
	return n
}

func readNPMModels(t *testing.T) []npmModel {
	f, err := os.Open("testdata/npm-models.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []npmModel
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 3 {
			t.Fatalf("npm-models.txt: %q: want package@version path sha256 [dims]", line)
		}
		m := npmModel{pkg: fs[0], path: fs[1], sha: fs[2], dims: map[string]int64{}, values: map[string][]int64{}}
		for _, d := range fs[3:] {
			if v, ok := strings.CutPrefix(d, "value:"); ok {
				name, x, err := ParseValue(v)
				if err != nil {
					t.Fatal(err)
				}
				m.values[name] = x
				continue
			}
			name, v, err := ParseDim(d)
			if err != nil {
				t.Fatal(err)
			}
			m.dims[name] = v
		}
		out = append(out, m)
	}
	return out
}

// TestNPMModels reads the ONNX models of testdata/npm-models.txt as
// their packages ship them (fetched by testdata/fetch-npm.sh into
// $QUASIM_ONNX_NPM), plans each, checks every plan against the model
// with CheckPlan, and prints docs/kernel-authors/memgraph.md's table:
//
//	QUASIM_ONNX_NPM=/tmp/npm memgraph/onnx/testdata/fetch-npm.sh
//	QUASIM_ONNX_NPM=/tmp/npm go test ./memgraph/onnx -run TestNPMModels -v
func TestNPMModels(t *testing.T) {
	dir := os.Getenv("QUASIM_ONNX_NPM")
	if dir == "" {
		t.Skip("QUASIM_ONNX_NPM is not set: fetch the models with memgraph/onnx/testdata/fetch-npm.sh DIR and set it to DIR")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| model | package | dims | ops | tensors | subgraphs (ops) | largest subgraph: peak / its bound (bytes) | lower bound (bytes) | peak (bytes) | peak / bound |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range readNPMModels(t) {
		data, err := os.ReadFile(m.file(dir))
		if err != nil {
			t.Fatalf("%v (run memgraph/onnx/testdata/fetch-npm.sh %s)", err, dir)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != m.sha {
			t.Fatalf("%s: sha256 %x, want %s", m.path, sum, m.sha)
		}
		g, subs, err := ReadDetail(data, m.name(), Options{Dims: m.dims, Values: m.values})
		if err != nil {
			t.Errorf("%s: %v", m.name(), err)
			continue
		}
		r, err := memgraph.Plan(g, memgraph.Options{Rand: rand.New(rand.NewPCG(1, 0))})
		if err != nil {
			t.Fatalf("%s: %v", m.name(), err)
		}
		if err := CheckPlan(data, placements(g, r)); err != nil {
			t.Errorf("%s: %v", m.name(), err)
		}
		subOps, big := 0, Subgraph{}
		for _, s := range subs {
			subOps += s.Ops
			if s.Peak > big.Peak {
				big = s
			}
		}
		bigCol := "-"
		if len(subs) > 0 {
			bigCol = fmt.Sprintf("%d / %d", big.Peak, big.LowerBound)
		}
		var dims []string
		for k, v := range m.dims {
			dims = append(dims, fmt.Sprintf("%s=%d", k, v))
		}
		for k, v := range m.values {
			dims = append(dims, fmt.Sprintf("value:%s=%s", k, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]")))
		}
		slices.Sort(dims)
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d (%d) | %s | %d | %d | %.4f |\n", m.name(), m.pkg, strings.Join(dims, " "),
			len(g.Ops), len(g.Tensors), len(subs), subOps, bigCol, r.LowerBound, r.Peak, float64(r.Peak)/float64(max(r.LowerBound, 1)))
	}
	t.Log("\n" + b.String())
}

// placements pairs a plan's offsets with the graph's tensors, as
// quasimctl hands them to CheckPlan.
func placements(g *memgraph.Graph, r *memgraph.Result) []Placement {
	out := make([]Placement, len(g.Tensors))
	for i, tn := range g.Tensors {
		out[i] = Placement{Tensor: tn.ID, Offset: r.Offsets[i], Bytes: tn.Bytes}
	}
	return out
}
