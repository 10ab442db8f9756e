// fakeharness is an exec harness for tests: config mode picks how it
// behaves (ok, crash, hang, garbage, fail, wrongsum, cold, noisy; nan,
// slow, wrongfast and poison when asked for), n the time it reports.
// FAKE_HELLO=bad makes it say a bad hello, FAKE_HELLO=none say nothing;
// FAKE_WRONG=1 makes every n but 2 sum wrong, FAKE_WRONG_FILE=PATH does
// once PATH exists; a verify run with an error_kind answers an accuracy
// (1e-6 off, 0.5 when the sum is wrong, bound 1e-5);
// FAKE_DEVICE sets the device class it declares; FAKE_MODES, a comma-separated
// list, replaces the modes it declares. FAKE_PIPELINE (spans, times or
// late) declares a three-stage pipeline and answers pipeline requests with
// spans, with stage times, or with a stage that starts before its join.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	switch os.Getenv("FAKE_HELLO") {
	case "bad":
		fmt.Println(`{"type":"hello","protocol":99,"name":"fake","params":[]}`)
		return
	case "none":
		time.Sleep(time.Hour)
	}
	device := ""
	if d := os.Getenv("FAKE_DEVICE"); d != "" {
		device = `"device":"` + d + `",`
	}
	modes := `"ok","crash","hang","garbage","fail","wrongsum","cold","noisy"`
	if m := os.Getenv("FAKE_MODES"); m != "" {
		modes = `"` + strings.ReplaceAll(m, ",", `","`) + `"`
	}
	fmt.Println(`{"type":"hello","protocol":1,"name":"fake","version":"1",` + device + `"params":[` +
		`{"name":"mode","values":[` + modes + `],"default":"ok"},` +
		`{"name":"n","values":[1,2,3,4],"default":2}],"constraints":["n <= 4"]` + pipelineDecl() + `}`)
	in := bufio.NewScanner(os.Stdin)
	poisoned := false
	for in.Scan() {
		if poisoned {
			fmt.Fprintln(os.Stderr, "fake: heap corrupted by an earlier request")
			os.Exit(6)
		}
		var req struct {
			Type        string         `json:"type"`
			ID          int            `json:"id"`
			Config      map[string]any `json:"config"`
			Repetitions int            `json:"repetitions"`
			Verify      bool           `json:"verify"`
			ErrorKind   string         `json:"error_kind"`

			Configs map[string]map[string]any `json:"configs"`
			Delays  map[string]int64          `json:"delays_ns"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(3)
		}
		if req.Type == "shutdown" {
			return
		}
		if req.Type == "pipeline" {
			fmt.Println(pipelineAnswer(req.ID, req.Configs, req.Delays))
			continue
		}
		n, _ := req.Config["n"].(float64)
		sum, slow := 42.0, 1.0
		switch req.Config["mode"] {
		case "crash":
			fmt.Fprintln(os.Stderr, "fake: crashing as asked")
			os.Exit(7)
		case "poison": // answers as ok, and the next request finds the process broken
			poisoned = true
		case "hang":
			time.Sleep(time.Hour)
		case "garbage":
			fmt.Println("this is not JSON")
			continue
		case "fail":
			fmt.Printf(`{"type":"result","id":%d,"error_class":"compile","error":"fake: does not compile"}`+"\n", req.ID)
			continue
		case "nan": // as Python's json.dumps writes a NaN: not JSON
			fmt.Printf(`{"type":"result","id":%d,"times_ms":[NaN],"checksum":NaN}`+"\n", req.ID)
			continue
		case "wrongsum":
			sum = 43
		case "wrongfast": // wrong, and 4x faster than ok
			sum, slow = 43, 0.25
		case "slow": // right, and really 4x slower than ok
			time.Sleep(time.Duration(max(1, req.Repetitions)) * time.Millisecond)
			slow = 4
		}
		if os.Getenv("FAKE_WRONG") == "1" && n != 2 {
			sum = 43
		}
		// A device that goes wrong while the harness runs: wrong, as
		// FAKE_WRONG, once the file exists.
		if f := os.Getenv("FAKE_WRONG_FILE"); f != "" && n != 2 {
			if _, err := os.Stat(f); err == nil {
				sum = 43
			}
		}
		times := make([]float64, max(1, req.Repetitions))
		for i := range times {
			times[i] = slow*(1+n/2) + float64(i%3)*0.01
		}
		res := map[string]any{"type": "result", "id": req.ID, "times_ms": times, "checksum": sum}
		if req.Verify && req.ErrorKind != "" { // a job with an error budget: 1e-6 off, 0.5 when wrong
			res["accuracy"] = map[string]any{"kind": req.ErrorKind, "measured": map[bool]float64{true: 0.5, false: 1e-6}[sum != 42], "bound": 1e-5}
		}
		switch req.Config["mode"] {
		case "cold": // the first run of a request is slow; 0.5 J a run
			times[0] = 100
			res["energy_j"] = 0.5
		case "noisy": // never settles; n = 4 reports runs of 100-500 ms, n = 3 of 10-12 ms
			scale := map[bool]float64{true: 100, false: 1}[n == 4]
			for i := range times {
				times[i] = float64(1+(req.ID*7+i)%5) * scale
				if n == 3 {
					times[i] = 10 + float64((req.ID*7+i)%5)/2
				}
			}
		}
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
	}
}

// pipelineDecl is the hello's pipeline: a and c on stream s1, b (a kernel
// of its own, with a param w) on s2, c joining b.
func pipelineDecl() string {
	if os.Getenv("FAKE_PIPELINE") == "" {
		return ""
	}
	return `,"pipeline":{"name":"fakepipe","stages":[` +
		`{"name":"a","problem":[64],"stream":"s1"},` +
		`{"name":"b","kernel":"side","problem":[8],"stream":"s2","params":[{"name":"w","values":[1,2,3],"default":1}]},` +
		`{"name":"c","problem":[32],"stream":"s1","after":["b"]}]}`
}

// pipelineAnswer makes up an iteration's times, without running anything:
// a takes n ms, b w*0.4 ms, c 0.5 ms, each plus its delay.
func pipelineAnswer(id int, configs map[string]map[string]any, delays map[string]int64) string {
	n, _ := configs["a"]["n"].(float64)
	if n == 0 {
		n = 2
	}
	w, _ := configs["b"]["w"].(float64)
	if w == 0 {
		w = 1
	}
	const ms = 1000000
	t0 := int64(5*ms + id*100*ms) // a clock that moves on between iterations
	aEnd := t0 + int64(n*ms) + delays["a"]
	bEnd := t0 + int64(w*0.4*ms) + delays["b"]
	cStart := max(aEnd, bEnd)
	if os.Getenv("FAKE_PIPELINE") == "late" {
		bEnd, cStart = aEnd+ms, aEnd // c does not wait for b
	}
	cEnd := cStart + ms/2 + delays["c"]
	res := map[string]any{"type": "pipeline_result", "id": id}
	if os.Getenv("FAKE_PIPELINE") == "times" {
		res["end_to_end_ns"] = cEnd - t0
		res["stage_ns"] = map[string]int64{"a": aEnd - t0, "b": bEnd - t0, "c": cEnd - cStart}
	} else {
		span := func(name string, start, end int64) map[string]any {
			s := map[string]any{"stage": name, "start_ns": start, "end_ns": end}
			if d, ok := delays[name]; ok {
				s["delayed_ns"] = d
			}
			return s
		}
		res["spans"] = []any{span("c", cStart, cEnd), span("a", t0, aEnd), span("b", t0, bEnd)}
	}
	b, _ := json.Marshal(res)
	return string(b)
}
