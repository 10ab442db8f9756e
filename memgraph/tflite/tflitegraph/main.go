// Command tflitegraph writes the memory graph (memgraph's JSON) of a
// TensorFlow Lite model's main subgraph.
//
//	go run ./memgraph/tflite/tflitegraph -name NAME MODEL.tflite > GRAPH.json
//
// memgraph/testdata/regen.sh runs it over the mediapipe models.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quasim/quasim/memgraph/tflite"
)

func main() {
	name := flag.String("name", "", "graph name (default: the file's base name)")
	source := flag.String("source", "", "provenance text for the graph's source field")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tflitegraph [-name NAME] [-source TEXT] MODEL.tflite")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *name, *source); err != nil {
		fmt.Fprintln(os.Stderr, "tflitegraph:", err)
		os.Exit(1)
	}
}

func run(path, name, source string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".tflite")
	}
	g, err := tflite.Read(data, name)
	if err != nil {
		return err
	}
	if source != "" {
		g.Source = source
	}
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(g)
}
