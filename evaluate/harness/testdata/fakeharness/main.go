// fakeharness is an exec harness for tests: config mode picks how it
// behaves (ok, crash, hang, garbage, fail, wrongsum, cold, noisy; nan,
// slow and wrongfast when asked for), n the time it reports.
// FAKE_HELLO=bad makes it say a bad hello, FAKE_HELLO=none say nothing;
// FAKE_DEVICE sets the device class it declares; FAKE_MODES, a comma-separated
// list, replaces the modes it declares.
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
		`{"name":"n","values":[1,2,3,4],"default":2}],"constraints":["n <= 4"]}`)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			Type        string         `json:"type"`
			ID          int            `json:"id"`
			Config      map[string]any `json:"config"`
			Repetitions int            `json:"repetitions"`
			Verify      bool           `json:"verify"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(3)
		}
		if req.Type == "shutdown" {
			return
		}
		n, _ := req.Config["n"].(float64)
		sum, slow := 42.0, 1.0
		switch req.Config["mode"] {
		case "crash":
			fmt.Fprintln(os.Stderr, "fake: crashing as asked")
			os.Exit(7)
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
		times := make([]float64, max(1, req.Repetitions))
		for i := range times {
			times[i] = slow*(1+n/2) + float64(i%3)*0.01
		}
		res := map[string]any{"type": "result", "id": req.ID, "times_ms": times, "checksum": sum}
		switch req.Config["mode"] {
		case "cold": // the first run of a request is slow; 0.5 J a run
			times[0] = 100
			res["energy_j"] = 0.5
		case "noisy": // never settles; n = 4 reports runs of 100-500 ms
			scale := map[bool]float64{true: 100, false: 1}[n == 4]
			for i := range times {
				times[i] = float64(1+(req.ID*7+i)%5) * scale
			}
		}
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
	}
}
