package memplan

import (
	"strings"
	"testing"
)

func TestParseCache(t *testing.T) {
	cs, err := ParseCache("48K/64/12, 2M/64/16,32M/64/0")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Levels) != 3 || cs.Levels[0].Size != 48<<10 || cs.Levels[1].Size != 2<<20 || cs.Levels[2].Assoc != 0 || cs.Levels[1].Name != "L2" {
		t.Fatalf("%+v", cs)
	}
	for _, bad := range []string{"", "48K/64", "48K/64/x", "-1/64/8", "1Q/64/8", "9999999999T/64/1"} {
		if _, err := ParseCache(bad); err == nil {
			t.Errorf("ParseCache(%q) gave no error", bad)
		} else if !strings.Contains(err.Error(), "cache") {
			t.Errorf("ParseCache(%q): %v does not name the cache", bad, err)
		}
	}
	for in, want := range map[string]int64{"0": 0, "65536": 65536, "1k": 1024, "16G": 16 << 30, "2T": 2 << 40} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// FuzzParseCache: any text either parses into levels whose sizes were
// written, or fails; never a panic or a negative size.
func FuzzParseCache(f *testing.F) {
	for _, s := range []string{"48K/64/12,2M/64/16", "1/1/1", "8T/64/0", ",", "K/K/K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseCache(s)
		if err != nil {
			return
		}
		for _, l := range cs.Levels {
			if l.Size < 0 || l.Line < 0 {
				t.Fatalf("%q gave %+v", s, l)
			}
		}
	})
}
