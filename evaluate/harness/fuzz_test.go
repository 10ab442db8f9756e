package harness

import (
	"encoding/json"
	"testing"

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
