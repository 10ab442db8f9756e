package spec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// This file holds the checks decoding shares: precision stages, error lines,
// constraint compilation and cron schedules.

// stages is the precision parameters of a job: the evaluator's own (a
// builtin kernel's), and those the spec declares.
func (s *Spec) stages(own map[string]precision.Stage) map[string]precision.Stage {
	out := maps.Clone(own)
	if out == nil {
		out = make(map[string]precision.Stage, len(s.Precision))
	}
	maps.Copy(out, s.Precision)
	return out
}

// withLine sets the line of a "parameters.<name>" or "default.<name>"
// error to that of the name's value in mapping m.
func withLine(err error, m *node) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Line == 0 {
		if _, name, ok := strings.Cut(fe.Field, "."); ok {
			if v := m.get(name); v != nil {
				fe.Line = v.line
			}
		}
	}
	return err
}

// compileCheck compiles a constraint: against names when known, else for
// syntax only (any name resolves).
func compileCheck(src string, names []string, anyName bool) error {
	resolve := func(name string) (int, bool) {
		if anyName {
			return 0, true
		}
		i := slices.Index(names, name)
		return i, i >= 0
	}
	_, err := genome.Compile(src, resolve)
	return err
}

// parseCron parses a schedule with cron.ParseStandard, turning its panics on
// some inputs (a time zone prefix with nothing after it) into errors.
func parseCron(s string) (sched cron.Schedule, err error) {
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		if !strings.Contains(s, " ") {
			return nil, errors.New("time zone with no schedule after it")
		}
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule: %v", r)
		}
	}()
	return cron.ParseStandard(s)
}

// CronSchedule parses s.Schedule with cron.ParseStandard.
func (s *Spec) CronSchedule() (cron.Schedule, error) {
	sched, err := parseCron(s.Schedule)
	if err != nil {
		return nil, &FieldError{File: s.file(), Field: "schedule", Err: fmt.Errorf("%q: %w", s.Schedule, err)}
	}
	return sched, nil
}
