package precision

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestReferenceTable compares FP16 and BF16 rounding with a table made by
// numpy's float16 and torch's bfloat16 casts (testdata/gen_ref.py).
func TestReferenceTable(t *testing.T) {
	f, err := os.Open("testdata/ref.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(z)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var xb uint32
		var h, b uint16
		if _, err := fmt.Sscanf(line, "%x %x %x", &xb, &h, &b); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		x := math.Float32frombits(xb)
		if g := EncodeFP16(x); g != h {
			t.Errorf("FP16(%v [%08x]) = %04x, numpy %04x", x, xb, g, h)
		}
		if g := EncodeBF16(x); g != b {
			t.Errorf("BF16(%v [%08x]) = %04x, torch %04x", x, xb, g, b)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 10000 {
		t.Fatalf("only %d reference values", n)
	}
}
