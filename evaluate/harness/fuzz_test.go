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
	f.Add([]byte(`{"type":"hello","protocol":1,"name":"x","params":[{"name":"b","values":["fp32","fp16","bf16"],"default":"fp16","precision":"input"},{"name":"acc","values":["fp64","kahan","fp32"],"precision":"acc"}]}`))
	f.Add([]byte(`{"type":"hello","protocol":1,"name":"x","params":[{"name":"a","values":[1]}],"pipeline":{"name":"p","stages":[` +
		`{"name":"s","problem":[4],"stream":"t0"},{"name":"u","kernel":"k","problem":[2],"stream":"t1","params":[{"name":"w","values":[1,2]}],"constraints":["w < 2"]},` +
		`{"name":"v","problem":[1],"stream":"t0","after":["u"]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Hello
		if json.Unmarshal(data, &m) != nil || checkHello(m) != nil {
			return
		}
		if d := m.Pipeline; d != nil {
			// A declared pipeline that passed has its joins in order.
			at := map[string]int{}
			for i, s := range d.Stages {
				for _, a := range s.After {
					if j, ok := at[a]; !ok || d.Stages[j].Stream == s.Stream {
						t.Fatalf("stage %q joins %q, not an earlier stage of another stream", s.Name, a)
					}
				}
				at[s.Name] = i
			}
			h := &Harness{hello: m}
			for i := range d.Stages {
				if sp, err := h.StageSpace(i); err == nil && !sp.InRange(sp.Default()) {
					t.Fatalf("stage %d: default out of range", i)
				}
			}
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
		// A precision parameter that passed lists format names of its
		// stage, most accurate first.
		h := &Harness{hello: m}
		for name, st := range h.Precision() {
			i, _ := sp.Param(name)
			q := sp.Params()[i]
			vals := make([]string, len(q.Values))
			for i, v := range q.Values {
				vals[i] = v.S
			}
			if err := st.CheckOrder(vals); err != nil {
				t.Fatalf("precision param %s accepted: %v", name, err)
			}
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
	f.Add([]byte(`{"type":"result","id":7,"times_ms":[1],"checksum":2,"accuracy":{"kind":"rel","measured":1e-3,"bound":9e-3,"stages":[{"stage":"input","bound":8e-3}]}}`), true)
	f.Add([]byte(`{"type":"result","id":7,"times_ms":[1],"checksum":2,"parity":{"reference":"the output of the reference config 1,2","tolerance_kind":"rel","rel":1e-4,"max_abs_err":1e-6,"max_rel_err":1e-7,"worst":"y[3]","bad":0,"total":10}}`), true)
	f.Add([]byte(`{"type":"result","id":7,"times_ms":[1],"checksum":2,"parity":{"bad":2,"total":1}}`), true)
	f.Fuzz(func(t *testing.T, line []byte, verify bool) {
		res, status, note, ok := parseResult(line, 7, verify)
		// A parity used for a certificate compared something and found
		// every element within its tolerance.
		if p := res.Parity; status == evaluate.StatusOK && p != nil && (!verify || p.Total <= 0 || p.Bad != 0 || !(p.MaxAbsErr >= 0) || !(p.MaxRelErr >= 0)) {
			t.Fatalf("parity accepted: %+v", p)
		}
		// An accuracy answer is used only when it is one of the kind asked
		// for, with errors that are numbers >= 0.
		if a := res.Accuracy; checkAccuracy(a, "rel") == "" {
			if a.Kind != "rel" || !(a.Measured >= 0 && a.Bound >= 0) || math.IsInf(a.Measured+a.Bound, 0) {
				t.Fatalf("accuracy accepted: %+v", a)
			}
		}
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

// A pipeline answer is checked against the declaration, never trusted: an
// accepted one has every stage once, times in order (a stage after its
// stream's previous one and its joins) and delays no shorter than asked.
func FuzzPipelineResult(f *testing.F) {
	f.Add([]byte(`{"type":"pipeline_result","id":3,"spans":[{"stage":"a","start_ns":0,"end_ns":50},{"stage":"b","start_ns":0,"end_ns":150,"delayed_ns":100,"stream":"y"},{"stage":"c","start_ns":150,"end_ns":170,"after":["b"]}]}`))
	f.Add([]byte(`{"type":"pipeline_result","id":3,"end_to_end_ns":170,"stage_ns":{"a":50,"b":150,"c":20},"delayed_ns":{"b":100}}`))
	f.Add([]byte(`{"type":"pipeline_result","id":3,"error":"x"}`))
	f.Add([]byte(`{"type":"pipeline_result","id":3,"spans":[{"stage":"c","start_ns":9,"end_ns":1}]}`))
	d := &PipelineDecl{Name: "p", Stages: []StageDecl{
		{Name: "a", Problem: []int{1}, Stream: "x"},
		{Name: "b", Problem: []int{1}, Stream: "y"},
		{Name: "c", Problem: []int{1}, Stream: "x", After: []string{"b"}},
	}}
	delays := map[string]int64{"b": 100}
	f.Fuzz(func(t *testing.T, line []byte) {
		res, err := parsePipelineResult(line, 3, d, delays)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if res.Spans == nil {
			if len(res.StageNS) != 3 || res.EndToEndNS <= 0 {
				t.Fatalf("accepted times %+v", res)
			}
			for _, x := range res.StageNS {
				if x < 0 || x > res.EndToEndNS {
					t.Fatalf("accepted stage time %d", x)
				}
			}
			return
		}
		a, b, c := res.Spans[0], res.Spans[1], res.Spans[2]
		if a.Stage != "a" || b.Stage != "b" || c.Stage != "c" || c.StartNS < a.EndNS || c.StartNS < b.EndNS || a.StartNS > a.EndNS || a.StartNS < 0 {
			t.Fatalf("accepted spans %+v", res.Spans)
		}
		if b.DelayedNS != 0 && (b.DelayedNS < 100 || b.DelayedNS > b.EndNS-b.StartNS) || a.DelayedNS != 0 || c.DelayedNS != 0 {
			t.Fatalf("accepted delays %+v", res.Spans)
		}
	})
}
