package daemon

import (
	"net/url"
	"strings"
	"testing"

	"github.com/quasim/quasim/internal/store"
)

var testFront = store.Served{Key: "a", Front: []store.FrontPoint{
	{Key: "a", TimeMS: 1.00, EnergyMJ: 100, Certificate: "ca"},
	{Key: "b", TimeMS: 1.03, EnergyMJ: 80, Certificate: "cb"},
	{Key: "c", TimeMS: 1.50, EnergyMJ: 50, Certificate: "cc"},
}}

func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		query, want, err string
	}{
		{"", "", ""},
		{"objective=energy&max_slowdown=0.05", "b", ""},
		{"objective=energy", "c", ""},
		{"objective=time", "a", ""},
		{"objective=edp&max_slowdown=1", "c", ""},
		{"max_slowdown=0.05", "", "max_slowdown: needs objective"},
		{"objective=speed", "", `objective "speed"`},
		{"objective=energy&max_slowdown=-1", "", `max_slowdown "-1"`},
		{"objective=energy&max_slowdown=5%25", "", `max_slowdown "5%"`},
	} {
		q, _ := url.ParseQuery(tc.query)
		p, err := parsePolicy(q)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.query, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		a, note := p.choose(testFront)
		got := ""
		if a != nil {
			got = a.chosen.Key
		}
		if got != tc.want || (p == nil) != (note == "" && a == nil) {
			t.Errorf("%q: chose %q (note %q), want %q", tc.query, got, note, tc.want)
		}
	}
	q, _ := url.ParseQuery("objective=energy&max_slowdown=0.05")
	p, _ := parsePolicy(q)
	a, _ := p.choose(testFront)
	if a.Certificate() != "cb" || a.FastestKey != "a" || a.Points != 3 || a.Slowdown < 0.0299 || a.Slowdown > 0.0301 || a.EnergySaved < 0.1999 || a.EnergySaved > 0.2001 {
		t.Errorf("choice %+v", a)
	}
	if a, note := p.choose(store.Served{Key: "a"}); a != nil || note == "" {
		t.Errorf("no front: %v, note %q", a, note)
	}
}

func (a *frontAnswer) Certificate() string { return a.chosen.Certificate }

func FuzzPolicy(f *testing.F) {
	f.Add("energy", "0.05")
	f.Add("0.7*time + 0.3*energy", "")
	f.Add("edp", "1e309")
	f.Fuzz(func(t *testing.T, obj, max string) {
		q := url.Values{"objective": {obj}}
		if max != "" {
			q.Set("max_slowdown", max)
		}
		p, err := parsePolicy(q)
		if err != nil {
			return
		}
		a, note := p.choose(testFront)
		if a == nil {
			if note == "" {
				t.Fatalf("%q %q: no choice and no note", obj, max)
			}
			return
		}
		if p.maxSlowdown >= 0 && a.Slowdown > p.maxSlowdown+1e-12 {
			t.Fatalf("%q %q: slowdown %v above %v", obj, max, a.Slowdown, p.maxSlowdown)
		}
	})
}
