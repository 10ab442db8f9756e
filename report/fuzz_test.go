package report

import (
	"encoding/binary"
	"encoding/xml"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

var badNumber = regexp.MustCompile(`(?i)\b(nan|[+-]?inf)\b`)

// FuzzWrite draws trials made of arbitrary bytes (times and energies of
// any float64, NaN, infinities and negatives included; keys that do or do
// not split into the parameters; any status): the page is always written,
// each chart is well-formed with as many series as it declares, and no
// coordinate is NaN or infinite.
func FuzzWrite(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"))
	seed := make([]byte, 0, 19*4)
	for i, v := range []float64{1, 2, math.Inf(1), math.NaN()} {
		var b [19]byte
		b[0], b[1] = byte(i), byte(i*3)
		binary.LittleEndian.PutUint64(b[3:], math.Float64bits(v))
		binary.LittleEndian.PutUint64(b[11:], math.Float64bits(v*3))
		seed = append(seed, b[:]...)
	}
	f.Add(seed)
	statuses := []string{"ok", "ok", "ok", "compile", "runtime", "timeout", "wrong_result", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		var trials []api.Trial
		var cycles []api.Cycle
		for len(data) >= 19 {
			c := data[:19]
			data = data[19:]
			key := strconv.Itoa(int(c[0]%5)) + "," + strconv.Itoa(int(c[1]%3))
			if c[2]&0x80 != 0 {
				key = "x" // does not split
			}
			tr := api.Trial{Key: key, Status: statuses[c[2]%8], Problem: "p", Device: "d", Cycle: int(c[2] % 3),
				TimeMS:   math.Float64frombits(binary.LittleEndian.Uint64(c[3:])),
				EnergyMJ: math.Float64frombits(binary.LittleEndian.Uint64(c[11:]))}
			trials = append(trials, tr)
			if tr.Cycle > 0 && len(cycles) < tr.Cycle {
				cycles = append(cycles, api.Cycle{ID: tr.Cycle, Job: "k/p/d", Problem: "p", Device: "d", Allocation: map[string]int{"es": int(c[0]), "random": int(c[1])}})
			}
		}
		in := Input{Kernels: []Kernel{{
			Info:   api.Kernel{Name: "k", Jobs: []api.Job{{ID: "k/p/d", Problem: "p", Device: "d", Served: &api.Config{Key: "1,1", TimeMS: 1, DefaultMS: 3}}}},
			Params: []string{"a", "b"}, Trials: trials, Cycles: cycles,
		}}}
		var b strings.Builder
		if err := Write(&b, in); err != nil {
			t.Fatal(err)
		}
		for _, s := range charts(b.String()) {
			if err := xml.Unmarshal([]byte(s), new(any)); err != nil {
				t.Fatalf("chart not well-formed: %v\n%s", err, s)
			}
			n, _ := strconv.Atoi(seriesRe.FindStringSubmatch(s)[1])
			if got := strings.Count(s, `<g class="series"`); n == 0 || got != n {
				t.Fatalf("chart declares %d series, has %d", n, got)
			}
			// The regexp (case-folded, with \b) took half the time;
			// it runs only where its letters are.
			if l := strings.ToLower(s); !strings.Contains(l, "nan") && !strings.Contains(l, "inf") {
				continue
			}
			if m := badNumber.FindString(s); m != "" {
				t.Fatalf("chart has %q:\n%s", m, s)
			}
		}
	})
}
