package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/quasim/quasim/evaluate/replay"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// This file loads the recorded spaces bench replays: files or directories
// of recordings, made into evolve.BenchSpaces.

// benchSpace is a loaded recording ready for replay.
type benchSpace struct {
	evolve.BenchSpace
	rec *replay.Recording
}

// loadSpaces reads every recording named by paths, files or directories.
func loadSpaces(paths []string) ([]benchSpace, error) { return loadSpacesFlag("--space", paths) }

// loadSpacesFlag is loadSpaces naming flag in its errors.
func loadSpacesFlag(flag string, paths []string) ([]benchSpace, error) {
	if len(paths) == 0 {
		return nil, usagef("no %s given", flag)
	}
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, usagef("%s %s: %w", flag, p, err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, p, err)
		}
		n := 0
		for _, e := range ents {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".json.gz")) {
				files = append(files, filepath.Join(p, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, usagef("%s %s: no .json or .json.gz files in it", flag, p)
		}
	}
	out := make([]benchSpace, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rec, err := replay.Load(f)
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = newBenchSpace(rec)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// Files of one base name in different folders (the benchmark hub's
	// kernel/GPU.json.gz layout) are named by their folder too: kernel/GPU.
	count := map[string]int{}
	for _, s := range out {
		count[s.Name]++
	}
	for i := range out {
		if count[out[i].Name] > 1 {
			out[i].Name = filepath.Base(filepath.Dir(files[i])) + "/" + out[i].Name
		}
	}
	seen := map[string]string{}
	for i := range out {
		if prev, dup := seen[out[i].Name]; dup {
			return nil, usagef("spaces %s and %s have the same name %q", prev, files[i], out[i].Name)
		}
		seen[out[i].Name] = files[i]
	}
	return out, nil
}

func newBenchSpace(rec *replay.Recording) benchSpace {
	sp, _ := rec.Space(emptyProblem)
	opt, _ := rec.Optimum()
	var valid []float64
	for _, c := range sp.All() {
		if t, ok := rec.Trial(sp.Key(c)); ok && t.OK() {
			valid = append(valid, t.Time)
		}
	}
	// Repetitions are times: only a time objective can be drawn from them.
	obj, _, rule := rec.Objective()
	timed := obj == "time" && rule == replay.RuleRatio
	bs := evolve.BenchSpace{
		Name:    rec.Name,
		Space:   sp,
		Optimum: opt,
		Size:    rec.Len(),
		Valid:   valid,
		Measure: func(c genome.Config) (evolve.Measurement, error) {
			t, err := rec.Evaluate(context.Background(), c, emptyProblem)
			if err != nil {
				return evolve.Measurement{}, err
			}
			m := evolve.Measurement{Key: t.Key, Status: string(t.Status), Time: t.Time, OK: t.OK(), Cost: t.Cost}
			if timed {
				m.Times = t.Times
			}
			return m, nil
		},
	}
	return benchSpace{BenchSpace: bs, rec: rec}
}
