package spec

import (
	"strings"
	"testing"
)

type writes []string

func (w *writes) Write(p []byte) (int, error) { *w = append(*w, string(p)); return len(p), nil }

func TestLines(t *testing.T) {
	var got writes
	lw := lines(&got)
	for _, chunk := range []string{"first li", "ne\nsecond\nthi", "rd\n", strings.Repeat("x", maxLine+3)} {
		lw.Write([]byte(chunk))
	}
	want := []string{"first line\n", "second\n", "third\n", strings.Repeat("x", maxLine)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines passed %q, want %q", got, want)
	}
	if lines(nil) != nil {
		t.Errorf("lines(nil) is not nil")
	}
}
