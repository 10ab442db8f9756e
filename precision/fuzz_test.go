package precision

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzRound checks, for any float32, that the bit-level encoders agree with
// the generic rounding and that every format's Round is idempotent.
func FuzzRound(f *testing.F) {
	for _, b := range []uint32{0, 0x80000000, 0x3f800000, 0x477fe000, 0x477ff000, 0x33000000, 0x7f800000, 0x7fc00001, 0x43e00000, 0x43e80000} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b uint32) {
		x := math.Float32frombits(b)
		for _, fm := range []Format{FP16, BF16, FP8E4M3} {
			r := fm.Round(x)
			g := float32(roundFloat(float64(x), specs[fm]))
			if math.Float32bits(r) != math.Float32bits(g) && !(r != r && g != g) {
				t.Fatalf("%s.Round(%#08x) = %v, generic %v", fm, b, r, g)
			}
			if rr := fm.Round(r); math.Float32bits(rr) != math.Float32bits(r) && !(rr != rr && r != r) {
				t.Fatalf("%s.Round not idempotent at %#08x: %v then %v", fm, b, r, rr)
			}
		}
		if e := DecodeE4M3(EncodeE4M3(x)); math.Float32bits(e) != math.Float32bits(FP8E4M3.Round(x)) && !(e != e && x != x) {
			t.Fatalf("E4M3 bits of %v decode to %v, Round gives %v", x, e, FP8E4M3.Round(x))
		}
	})
}

// FuzzStageRank checks, for any stage and value name, that Rank either
// refuses it or gives a rank whose canonical name ranks the same.
func FuzzStageRank(f *testing.F) {
	for _, s := range []string{"fp32", "half", "FP8", " int4 ", "kahan", "float64", "fp17", ""} {
		f.Add(uint8(StageAccumulation), s)
		f.Add(uint8(StageInput), s)
	}
	f.Fuzz(func(t *testing.T, st uint8, v string) {
		s := Stage(st % uint8(numStages))
		r, err := s.Rank(v)
		if err != nil {
			return
		}
		names := s.Names()
		if r < 0 || r >= len(names) {
			t.Fatalf("%s.Rank(%q) = %d, outside %d names", s, v, r, len(names))
		}
		if r2, err := s.Rank(names[r]); err != nil || r2 != r {
			t.Fatalf("%s.Rank(%q) = %d, but its name %q ranks %d, %v", s, v, r, names[r], r2, err)
		}
	})
}

// FuzzParseStage checks that ParseStage accepts exactly the stage names
// and "acc", in any case and with surrounding space.
func FuzzParseStage(f *testing.F) {
	for _, s := range []string{"input", " ACC", "output", "storage", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		g, err := ParseStage(v)
		t2 := strings.ToLower(strings.TrimSpace(v))
		want := t2 == "acc" || slices.Contains(stageNames[:], t2)
		if (err == nil) != want || (err == nil && t2 != "acc" && g.String() != t2) {
			t.Fatalf("ParseStage(%q) = %v, %v", v, g, err)
		}
	})
}
