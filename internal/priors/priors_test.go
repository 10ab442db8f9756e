package priors

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
)

// Synthetic spaces and values throughout.

func space(t testing.TB, params ...genome.Param) *genome.Space {
	t.Helper()
	s, err := genome.NewSpace(params, genome.SpaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ints(name string, vs ...int64) genome.Param {
	p := genome.Param{Name: name, Kind: genome.KindInt}
	for _, v := range vs {
		p.Values = append(p.Values, genome.Int(v))
	}
	return p
}

func synthetic(t testing.TB) Input {
	s := space(t, ints("bx", 8, 16, 32), ints("by", 1, 2))
	in := Input{Name: "syn_A", Kernel: "syn", Device: "A", Space: s}
	vals := map[string]float64{"8,1": 4, "8,2": 3, "16,1": 2, "16,2": 2, "32,1": 1}
	for _, c := range s.All() {
		v, ok := vals[s.Key(c)]
		in.Results = append(in.Results, Result{Config: c, OK: ok, Value: v})
	}
	return in
}

func TestNewSourceRanks(t *testing.T) {
	src, err := NewSource(synthetic(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0.375, 0.375, 0.75, 1} // ties share their mean rank
	if len(src.Quantiles) != len(want) {
		t.Fatalf("quantiles %v, want %v", src.Quantiles, want)
	}
	for i, q := range want {
		if src.Quantiles[i] != q {
			t.Fatalf("quantiles %v, want %v", src.Quantiles, want)
		}
	}
	if src.NumFailed() != 1 || src.Failed[0] != 2 || src.Failed[1] != 1 {
		t.Errorf("failed %v, want [2 1] (32,2)", src.Failed)
	}
	if src.Params[0].Values[2] != "32" {
		t.Errorf("params %v", src.Params)
	}
	in := synthetic(t)
	for i := range in.Results {
		in.Results[i].OK = false
	}
	if _, err := NewSource(in); err == nil || !strings.Contains(err.Error(), "no valid config") {
		t.Errorf("all failed: %v", err)
	}
}

func pack(t testing.TB) *Pack {
	src, err := NewSource(synthetic(t))
	if err != nil {
		t.Fatal(err)
	}
	return &Pack{Format: Format, Version: Version, Built: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Sources: []Source{src}}
}

func TestEncodeDecode(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, pack(t)); err != nil {
		t.Fatal(err)
	}
	p, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sources) != 1 || p.Sources[0].Valid() != 5 || p.Sources[0].Kernel != "syn" {
		t.Fatalf("round trip: %+v", p)
	}
	for _, tc := range []struct{ edit, want string }{
		{`"format":"quasim-priors"`, "format"},
		{`"version":1`, "version"},
		{`"quantiles":[0,0.375`, "quantiles[1]"},
		{`"configs":[2,7`, "configs[1] (config 0, by)"},
		{`"configs":[2,0,1`, "configs: 9 values"},
		{`"values":["8","8"`, "listed twice"},
		{`"kernel":"syn"`, "kernel"},
		{`"name":"bx"`, "params[0].name"},
	} {
		var plain bytes.Buffer
		p := pack(t)
		switch tc.want {
		case "format":
			p.Format = "other"
		case "version":
			p.Version = 9
		case "quantiles[1]":
			p.Sources[0].Quantiles[1] = 2
		case "configs[1] (config 0, by)":
			p.Sources[0].Configs[1] = 7
		case "configs: 9 values":
			p.Sources[0].Configs = p.Sources[0].Configs[:9]
		case "listed twice":
			p.Sources[0].Params[0].Values[1] = "8"
		case "kernel":
			p.Sources[0].Kernel = ""
		case "params[0].name":
			p.Sources[0].Params[0].Name = "1x"
		}
		if err := jsonEncode(&plain, p); err != nil {
			t.Fatal(err)
		}
		_, err := Decode(plain.Bytes())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.edit, err, tc.want)
		}
	}
	if _, err := Decode([]byte("{}")); err == nil {
		t.Error("empty object decoded")
	}
}

func TestForMatchesAndTranslates(t *testing.T) {
	p := pack(t)
	// The job's space lacks 8 and has a parameter order of its own.
	js := space(t, ints("by", 1, 2), ints("bx", 16, 32, 64))
	got := p.For(Job{Names: []string{"syn"}, Space: js}, nil)
	if len(got) != 1 {
		t.Fatalf("sources %v", got)
	}
	var keys []string
	for _, r := range got[0].Results {
		keys = append(keys, js.Key(r.Config)+map[bool]string{true: "", false: "!"}[r.OK])
	}
	if strings.Join(keys, " ") != "1,32 1,16 2,16 2,32!" {
		t.Errorf("translated %v", keys)
	}
	prior := evolve.RankTransfer(js, got)
	if js.Key(prior[0]) != "1,32" {
		t.Errorf("ranked first %s", js.Key(prior[0]))
	}
	if len(p.For(Job{Names: []string{"other"}, Space: js}, nil)) != 0 {
		t.Error("another kernel matched")
	}
	if len(p.For(Job{Names: []string{"syn"}, Space: js}, func(s *Source) bool { return s.Device == "A" })) != 0 {
		t.Error("skip ignored")
	}
	p.Sources[0].SourceSHA256 = "aa"
	if len(p.For(Job{Names: []string{"syn"}, SourceSHA256: "bb", Space: js}, nil)) != 0 {
		t.Error("a source edited since the recording matched by name")
	}
	if len(p.For(Job{Names: []string{"renamed"}, SourceSHA256: "aa", Space: js}, nil)) != 1 {
		t.Error("the same source under another name did not match")
	}
	// Rankings transfer between the same objectives, and a rate's to time.
	p.Sources[0].SourceSHA256 = ""
	for _, c := range []struct {
		source, job string
		maximized   bool
		want        int
	}{
		{"", "", false, 1}, {"time", "", false, 1}, {"", "time", false, 1},
		{"time", "energy", false, 0}, {"energy", "time", false, 0}, {"energy", "energy", false, 1},
		{"GFLOP/s", "time", true, 1}, {"GFLOP/s", "energy", true, 0}, {"edp", "edp", false, 1},
	} {
		p.Sources[0].Objective, p.Sources[0].Maximized = c.source, c.maximized
		if got := len(p.For(Job{Names: []string{"syn"}, Objective: c.job, Space: js}, nil)); got != c.want {
			t.Errorf("a source ranked by %q (maximized %v) for a job minimising %q: %d matches, want %d", c.source, c.maximized, c.job, got, c.want)
		}
	}
	p.Sources[0].Objective, p.Sources[0].Maximized = "", false
	// A space with a parameter the source lacks translates nothing.
	if len(p.For(Job{Names: []string{"syn"}, Space: space(t, ints("bx", 16), ints("bz", 1))}, nil)) != 0 {
		t.Error("matched without a shared parameter set")
	}
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := jsonEncode(&buf, pack(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"quasim-priors","version":1,"sources":[{"kernel":"k","params":[{"name":"a","values":["1"]}],"configs":[0],"quantiles":[0]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, p); err != nil {
			t.Fatalf("a decoded pack does not encode: %v", err)
		}
		if _, err := Decode(buf.Bytes()); err != nil {
			t.Fatalf("a decoded pack, encoded again, does not decode: %v", err)
		}
		js := space(t, ints("a", 1, 2), ints("bx", 8, 16, 32), ints("by", 1, 2))
		for _, s := range p.Sources {
			p.For(Job{Names: []string{s.Kernel}, SourceSHA256: s.SourceSHA256, Space: js}, nil)
		}
	})
}

// jsonEncode writes p as plain JSON, which Decode also reads.
func jsonEncode(w io.Writer, p *Pack) error { return json.NewEncoder(w).Encode(p) }
