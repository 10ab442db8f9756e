package sockapi

import (
	"testing"
)

func FuzzDecodeCursor(f *testing.F) {
	f.Add(Cursor("sgemm|h|1,2|cpu/x", 42))
	f.Add("")
	f.Add("c2dlbW0K")
	f.Fuzz(func(t *testing.T, s string) {
		job, seq, err := ParseCursor(s)
		if err != nil {
			return
		}
		j2, s2, err := ParseCursor(Cursor(job, seq))
		if err != nil || j2 != job || s2 != seq {
			t.Errorf("round trip of %q: %q %d %v, want %q %d", s, j2, s2, err, job, seq)
		}
	})
}
