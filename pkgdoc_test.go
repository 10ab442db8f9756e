package quasim_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every package keeps its documentation in exactly one doc.go (or, for a
// command, main.go) that starts with "// Package name" or "// Command name".
func TestPackageDocs(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		for name, pkg := range pkgs {
			var docs []string
			for file, f := range pkg.Files {
				if f.Doc != nil {
					docs = append(docs, filepath.Base(file))
				}
			}
			want := "doc.go"
			prefix := "Package " + name
			if name == "main" {
				want, prefix = "main.go", "Command "
			}
			if len(docs) != 1 || docs[0] != want {
				t.Errorf("%s: package doc in %v, want exactly %s", path, docs, want)
				continue
			}
			text := pkg.Files[filepath.Join(path, want)].Doc.Text()
			if !strings.HasPrefix(text, prefix) {
				t.Errorf("%s/%s: doc starts %q, want %q", path, want, firstLine(text), prefix)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatal("run from the module root")
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
