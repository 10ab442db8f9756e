package cli

import (
	"fmt"
	"io"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
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

// warmPriors ranks each space's configs by rank transfer from the
// recordings in paths of the same kernel on other devices: leave one GPU
// out. A space with no such recording gets an empty prior (a cold start).
func warmPriors(paths []string, spaces []benchSpace, stderr io.Writer) ([][]genome.Config, error) {
	from, err := loadSpacesFlag("--warm-from", paths)
	if err != nil {
		return nil, err
	}
	out := make([][]genome.Config, len(spaces))
	for i, t := range spaces {
		var srcs []evolve.Source
		var names []string
		for _, f := range from {
			if t.rec.Kernel == "" || f.rec.Kernel != t.rec.Kernel || f.rec.Device() == t.rec.Device() {
				continue
			}
			src := evolve.Source{Name: f.Name}
			for _, c := range f.Space.All() {
				tr, ok := f.rec.Trial(f.Space.Key(c))
				if !ok {
					continue
				}
				tc, ok := t.Space.Translate(f.Space, c)
				if !ok || !t.Space.Valid(tc) {
					continue
				}
				src.Results = append(src.Results, evolve.Result{Config: tc, OK: tr.OK(), Value: tr.Time})
			}
			if len(src.Results) > 0 {
				srcs = append(srcs, src)
				names = append(names, fmt.Sprintf("%s (%d configs)", f.Name, len(src.Results)))
			}
		}
		out[i] = evolve.RankTransfer(t.Space, srcs)
		if len(srcs) == 0 {
			fmt.Fprintf(stderr, "bench: %s: no recording of kernel %q on another device; its +warm runs start cold\n", t.Name, t.rec.Kernel)
			continue
		}
		fmt.Fprintf(stderr, "bench: %s warms from %v\n", t.Name, names)
	}
	return out, nil
}

// warmFactory wraps f so that each strategy it makes takes prior first.
func warmFactory(f evolve.Factory, prior []genome.Config) evolve.Factory {
	return func(s *genome.Space, seed uint64) evolve.Strategy {
		st := f(s, seed)
		st.(evolve.WarmStarter).WarmStart(prior)
		return st
	}
}
