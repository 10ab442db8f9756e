// Command onnxgraph writes the memory graph (memgraph's JSON) of an ONNX
// model's main graph.
//
//	go run ./memgraph/onnx/onnxgraph -name NAME -dim batch=1 MODEL.onnx > GRAPH.json
//
// memgraph/onnx/testdata/regen.sh runs it over the ONNX models of
// testdata/npm-models.txt.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quasim/quasim/memgraph/onnx"
)

// dims is the -dim flag: NAME=VALUE, repeatable.
type dims map[string]int64

func (d dims) String() string { return fmt.Sprint(map[string]int64(d)) }

func (d dims) Set(s string) error {
	name, v, err := onnx.ParseDim(s)
	if err == nil {
		d[name] = v
	}
	return err
}

// values is the -value flag: NAME=V[,V...], repeatable.
type values map[string][]int64

func (d values) String() string { return fmt.Sprint(map[string][]int64(d)) }

func (d values) Set(s string) error {
	name, v, err := onnx.ParseValue(s)
	if err == nil {
		d[name] = v
	}
	return err
}

func main() {
	opt := onnx.Options{Dims: dims{}, Values: values{}}
	name := flag.String("name", "", "graph name (default: the file's base name)")
	source := flag.String("source", "", "provenance text for the graph's source field")
	flag.Var(dims(opt.Dims), "dim", "value of a symbolic dimension, NAME=VALUE, or of dim K of graph input TENSOR, TENSOR[K]=VALUE (repeatable)")
	flag.Var(values(opt.Values), "value", "value of an integer graph input the model is always run with, NAME=V[,V...] (repeatable): an If on it takes one branch")
	flag.Int64Var(&opt.Unknown, "unknown", 0, "value of every graph input dimension still unknown, and of data-dependent output dims (0: such a dimension is an error)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: onnxgraph [-name NAME] [-source TEXT] [-dim NAME=VALUE]... [-value NAME=V]... [-unknown N] MODEL.onnx")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *name, *source, opt); err != nil {
		fmt.Fprintln(os.Stderr, "onnxgraph:", err)
		os.Exit(1)
	}
}

func run(path, name, source string, opt onnx.Options) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".onnx")
	}
	g, err := onnx.Read(data, name, opt)
	if err != nil {
		return err
	}
	if source != "" {
		g.Source = source
	}
	return json.NewEncoder(os.Stdout).Encode(g)
}
