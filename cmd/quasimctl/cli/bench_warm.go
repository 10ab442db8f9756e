package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/priors"
)

// warmSuffix marks a warm-started strategy in bench output and traces.
const warmSuffix = "+warm"

// oneParamSpace is a throwaway space to ask a factory what it makes.
var oneParamSpace = func() *genome.Space {
	s, err := genome.NewSpace([]genome.Param{{Name: "x", Kind: genome.KindInt, Values: []genome.Value{genome.Int(1), genome.Int(2)}}}, genome.SpaceOptions{})
	if err != nil {
		panic(err)
	}
	return s
}()

// warmPriors ranks each space's configs by rank transfer from the sources
// of the same kernel on other devices (leave one GPU out), as quasimd's
// warm start does: paths are recordings, as --space takes, or prior packs
// (*.qprior). A space with no such source gets an empty prior (a cold
// start).
func warmPriors(paths []string, spaces []benchSpace, stderr io.Writer) ([][]genome.Config, error) {
	pack, err := loadWarmPack(paths)
	if err != nil {
		return nil, err
	}
	out := make([][]genome.Config, len(spaces))
	for i, t := range spaces {
		job := priors.Job{Names: []string{t.rec.Kernel}, Space: t.Space}
		srcs := pack.For(job, func(s *priors.Source) bool { return t.rec.Kernel == "" || s.Device == t.rec.Device() })
		out[i] = evolve.RankTransfer(t.Space, srcs)
		if len(srcs) == 0 {
			fmt.Fprintf(stderr, "bench: %s: no recording of kernel %q on another device; its +warm runs start cold\n", t.Name, t.rec.Kernel)
			continue
		}
		names := make([]string, len(srcs))
		for j, s := range srcs {
			names[j] = fmt.Sprintf("%s (%d configs)", s.Name, len(s.Results))
		}
		fmt.Fprintf(stderr, "bench: %s warms from %v\n", t.Name, names)
	}
	return out, nil
}

// loadWarmPack reads --warm-from's prior packs and ranks its recordings
// into one pack.
func loadWarmPack(paths []string) (*priors.Pack, error) {
	pack := &priors.Pack{}
	var recs []string
	var packs []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			// A directory's packs, beside its recordings.
			found, _ := filepath.Glob(filepath.Join(p, "*"+priorsExt))
			packs = append(packs, found...)
			if rs, _ := filepath.Glob(filepath.Join(p, "*.json*")); len(rs) > 0 || len(found) == 0 {
				recs = append(recs, p)
			}
			continue
		}
		if !strings.HasSuffix(p, priorsExt) {
			recs = append(recs, p)
			continue
		}
		packs = append(packs, p)
	}
	for _, p := range packs {
		pk, err := readPackFile(p)
		if err != nil {
			return nil, fmt.Errorf("--warm-from: %w", err)
		}
		pack.Sources = append(pack.Sources, pk.Sources...)
	}
	if len(recs) == 0 {
		return pack, nil
	}
	from, err := loadSpacesFlag("--warm-from", recs)
	if err != nil {
		return nil, err
	}
	for _, f := range from {
		if in := priorInput(f); in.Kernel != "" {
			src, err := priors.NewSource(in)
			if err != nil {
				return nil, badInput(fmt.Errorf("--warm-from: %w", err))
			}
			pack.Sources = append(pack.Sources, src)
		}
	}
	return pack, nil
}

// warmFactory wraps f so that each strategy it makes takes prior first.
func warmFactory(f evolve.Factory, prior []genome.Config) evolve.Factory {
	return func(s *genome.Space, seed uint64) evolve.Strategy {
		st := f(s, seed)
		st.(evolve.WarmStarter).WarmStart(prior)
		return st
	}
}
