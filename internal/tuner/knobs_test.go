package tuner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

func knobTuner(t *testing.T, knobs func(string, map[string]any) (func() error, error)) *Tuner {
	_, key, _ := ed25519.GenerateKey(nil)
	return New(Config{Store: storetest.New(t), Signer: key, Knobs: knobs,
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})
}

// Device settings are applied around each measurement and restored after
// it; a failure to apply them fails the cycle with the reason.
func TestKnobsAppliedAndRestored(t *testing.T) {
	job := reduceJob(t)
	var applied, restored int
	tn := knobTuner(t, func(dev string, cfg map[string]any) (func() error, error) {
		if dev != job.Key.Device || len(cfg) != len(job.Space.Params()) {
			t.Errorf("knobs for %s with %v", dev, cfg)
		}
		applied++
		return func() error { restored++; return nil }, nil
	})
	cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 5}, "api", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Five measurements, one verification, and the certified config's
	// latency rounds, each beside the default unless it is the default.
	want := 6 + DefaultLatencyRounds
	if cy.Promoted != job.Space.Key(job.Default) {
		want += DefaultLatencyRounds
	}
	if applied != want || restored != want {
		t.Errorf("applied %d, restored %d after %d evals; want %d and %d", applied, restored, cy.Evals, want, want)
	}
	tn = knobTuner(t, func(string, map[string]any) (func() error, error) {
		return nil, errors.New("nvml_pwr_limit on nvidia/x: NVML refused: no permission")
	})
	cy, err = tn.Cycle(context.Background(), job, Budget{Evals: 5}, "api", 1, nil)
	if err == nil || cy.State != "failed" || !strings.Contains(cy.Error, "no permission") {
		t.Fatalf("cycle without privilege: %+v, %v", cy, err)
	}
}

// A replayed recording runs nothing: its power-limit parameter is never
// applied to a device.
func TestKnobsNotAppliedToReplay(t *testing.T) {
	job := syntheticReplayJob(t)
	job.Objective = evaluate.Objective{Kind: "energy"}
	tn := knobTuner(t, func(string, map[string]any) (func() error, error) {
		t.Error("knobs applied to a replay")
		return func() error { return nil }, nil
	})
	cy, err := tn.Cycle(context.Background(), job, Budget{Evals: 40}, "api", 1, nil)
	if err != nil || cy.State != "done" {
		t.Fatalf("%+v, %v", cy, err)
	}
	// The energy objective serves the least energy measured, and the
	// served record keeps the certified front of what was measured.
	trials, _ := tn.cfg.Store.Trials(job.Key)
	var pts []evaluate.Point
	least := store.Trial{}
	for _, tr := range trials {
		if tr.Status == "ok" {
			pts = append(pts, evaluate.Point{Key: tr.Key, TimeMS: tr.TimeMS, EnergyMJ: tr.EnergyMJ})
			if least.Key == "" || tr.EnergyMJ < least.EnergyMJ {
				least = tr
			}
		}
	}
	sv, ok, _ := tn.cfg.Store.Served(job.Key)
	want := evaluate.Front(pts)
	if !ok || sv.Key != least.Key || len(sv.Front) != len(want) || len(want) < 2 {
		t.Fatalf("served %s with a front of %d; want %s and %d (of %d measured)", sv.Key, len(sv.Front), least.Key, len(want), len(pts))
	}
	for i, f := range sv.Front {
		if f.Key != want[i].Key || f.Certificate == "" {
			t.Errorf("front[%d] = %+v, want %s certified", i, f, want[i].Key)
		}
	}
}
