package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/internal/priors"
	"github.com/quasim/quasim/internal/tuner"
)

// DefaultPriorsDir is where operators put prior packs (quasimctl priors
// build).
const DefaultPriorsDir = "/etc/quasim/priors.d"

// PriorsExt ends the name of a prior pack in a priors directory.
const PriorsExt = ".qprior"

// DefaultPriors is priors.d in the first $CONFIGURATION_DIRECTORY under
// systemd, else DefaultPriorsDir.
func DefaultPriors() string {
	if d := systemdDirs("CONFIGURATION_DIRECTORY"); len(d) > 0 {
		return filepath.Join(d[0], "priors.d")
	}
	return DefaultPriorsDir
}

// priorPacks are the prior packs quasimd warm-starts new jobs from.
type priorPacks struct {
	names []string // file base names, for the sources' names
	packs []*priors.Pack
}

// loadPriors reads the packs at path: one file, or every *.qprior file of a
// directory. A missing path is no packs unless it was given; a pack that
// does not decode is an error naming the file and field.
func loadPriors(path string, given bool) (*priorPacks, error) {
	out := &priorPacks{}
	if path == "" {
		return out, nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !given:
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("priors %q: %w", path, err)
	}
	files := []string{path}
	if fi.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("priors %q: %w", path, err)
		}
		files = nil
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), PriorsExt) {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	for _, f := range files {
		p, err := readPack(f)
		if err != nil {
			return nil, fmt.Errorf("priors %s: %w", f, err)
		}
		out.names = append(out.names, filepath.Base(f))
		out.packs = append(out.packs, p)
	}
	return out, nil
}

func readPack(path string) (*priors.Pack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return priors.Read(f)
}

// sources is the tuner's Priors hook: every pack's sources that match job,
// named "PACK:SOURCE".
func (pp *priorPacks) sources(job tuner.Job) []evolve.Source {
	if pp == nil {
		return nil
	}
	names := []string{job.Key.Kernel}
	if job.Kernel != "" && job.Kernel != job.Key.Kernel {
		names = append(names, job.Kernel)
	}
	pj := priors.Job{Names: names, SourceSHA256: job.SourceSHA256, Objective: job.Objective.String(), Space: job.Space}
	var out []evolve.Source
	for i, p := range pp.packs {
		for _, s := range p.For(pj, nil) {
			s.Name = pp.names[i] + ":" + s.Name
			out = append(out, s)
		}
	}
	return out
}

// len is the number of packs.
func (pp *priorPacks) len() int {
	if pp == nil {
		return 0
	}
	return len(pp.packs)
}

// String lists the packs and their sources, for the start-up log.
func (pp *priorPacks) String() string {
	var b strings.Builder
	for i, p := range pp.packs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%d sources)", pp.names[i], len(p.Sources))
	}
	return b.String()
}
