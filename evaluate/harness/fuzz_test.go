package harness

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/genome"
)

// A hello line is the harness's word on its own space: whatever it says,
// turning it into a space must fail cleanly or give a space whose configs
// are in range.
func FuzzHello(f *testing.F) {
	f.Add([]byte(`{"type":"hello","protocol":1,"name":"fake","version":"1","params":[{"name":"mode","values":["ok","crash"],"default":"ok"},{"name":"n","values":[1,2,3,4],"default":2}],"constraints":["n <= 4"]}`))
	f.Add([]byte(`{"type":"hello","protocol":1,"name":"x","params":[{"name":"a","values":[1.5,true,"s"],"default":true}]}`))
	f.Add([]byte(`{"type":"hello","protocol":1,"name":"x","params":[{"name":"a","values":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Hello
		if json.Unmarshal(data, &m) != nil || checkHello(m) != nil {
			return
		}
		base, err := params(m)
		if err != nil {
			return
		}
		sp, err := genome.NewSpace(base, genome.SpaceOptions{Constraints: m.Constraints})
		if err != nil {
			return
		}
		if d := sp.Default(); !sp.InRange(d) {
			t.Fatalf("default %v out of range", d)
		}
	})
}

// A result line is classified, never trusted: an ok one has times that
// are positive and finite, energy >= 0 and, for a verify run, a finite
// checksum; anything else carries a note.
func FuzzResult(f *testing.F) {
	f.Add([]byte(`{"type":"result","id":7,"times_ms":[1.91,1.88],"energy_j":0.42,"checksum":1.2345678e6}`), true)
	f.Add([]byte(`{"type":"result","id":7,"error_class":"compile","error":"nvcc: ..."}`), false)
	f.Add([]byte(`{"type":"result","id":7,"times_ms":[0],"energy_j":-1}`), false)
	f.Add([]byte(`{"type":"result","id":8,"times_ms":[1]}`), false)
	f.Add([]byte(`not json`), false)
	f.Fuzz(func(t *testing.T, line []byte, verify bool) {
		res, status, note, ok := parseResult(line, 7, verify)
		if !ok {
			if status != evaluate.StatusRuntime || !strings.Contains(note, "not the result of run 7") {
				t.Fatalf("not an answer: %s %q", status, note)
			}
			return
		}
		if status != evaluate.StatusOK {
			if status == "" || (note == "" && res.ErrorClass == "") {
				t.Fatalf("status %q with no note", status)
			}
			return
		}
		if len(res.TimesMS) == 0 || res.EnergyJ < 0 || (verify && (res.Checksum == nil || math.IsNaN(*res.Checksum) || math.IsInf(*res.Checksum, 0))) {
			t.Fatalf("ok result %+v", res)
		}
		for _, x := range res.TimesMS {
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("ok result with time %v", x)
			}
		}
	})
}
