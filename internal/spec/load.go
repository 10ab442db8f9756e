package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what LoadDir reads of one file.
const maxFileSize = 16 << 20

// Dir is what a spec directory declares: kernel specs and pipelines.
type Dir struct {
	Specs     []*Spec
	Pipelines []*Pipeline
	// PipelineErrs are the errors of pipeline files, kept apart from the
	// kernel specs' so that a bad pipeline file changes nothing of how
	// the kernels load.
	PipelineErrs []error
}

// LoadDir parses every *.yaml, *.yml and *.json file directly in dir, in
// name order; names starting with "." are skipped (editor and ConfigMap
// files). A missing dir gives (nil, nil). A file that fails is reported in
// errs and the others still load. A second file with a Name already loaded
// is an error wrapping ErrDuplicate, and only the first is kept. Pipeline
// files are skipped; Load reads them too.
func LoadDir(dir string) (specs []*Spec, errs []error) {
	d, errs := Load(dir)
	return d.Specs, errs
}

// Load is LoadDir that also reads the pipeline files: those whose top
// level holds the key "pipeline" (see ParsePipeline); their errors go to
// d.PipelineErrs, so errs are LoadDir's. Pipeline names are their own
// namespace: a second file declaring a pipeline already loaded is an error
// wrapping ErrDuplicatePipeline, and only the first is kept.
func Load(dir string) (d Dir, errs []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return d, nil
		}
		return d, []error{fmt.Errorf("load kernel specs: %w", err)}
	}
	byName := make(map[string]*Spec)
	pipes := make(map[string]*Pipeline)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !isSpecFile(name) {
			continue
		}
		path := filepath.Join(dir, name)
		data, err := readFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		root, err := parseTree(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isPipeline(root) && !isT1(path, root) {
			p, err := decodePipeline(path, data, root)
			if err != nil {
				d.PipelineErrs = append(d.PipelineErrs, err)
				continue
			}
			if first, dup := pipes[p.Name]; dup {
				d.PipelineErrs = append(d.PipelineErrs, &FieldError{File: path, Field: "pipeline",
					Err: fmt.Errorf("%q already defined in %s: %w", p.Name, first.Source, ErrDuplicatePipeline)})
				continue
			}
			pipes[p.Name] = p
			d.Pipelines = append(d.Pipelines, p)
			continue
		}
		src := path
		if abs, err := filepath.Abs(path); err == nil {
			src = abs
		}
		s, err := parseSpec(path, src, data, root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := byName[s.Name]; dup {
			errs = append(errs, &FieldError{File: path, Field: "name",
				Err: fmt.Errorf("%q already defined in %s: %w", s.Name, first.Source, ErrDuplicate)})
			continue
		}
		byName[s.Name] = s
		d.Specs = append(d.Specs, s)
	}
	return d, errs
}

func isSpecFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// readFile reads a regular file (following symlinks) of at most maxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}
