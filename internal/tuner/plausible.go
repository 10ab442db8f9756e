package tuner

import (
	"fmt"
	"math"

	"github.com/quasim/quasim/evaluate"
)

// plausible returns tr fit to store and rank: a valid trial whose time is
// not a positive finite number (NaN, a negative or zero median, an
// infinite run) or whose energy is not finite and >= 0 measured nothing
// believable, so it becomes a runtime failure saying what was reported;
// a failed trial just loses such values. The evaluators check what they
// time, but a broken device or harness must never make a config "fastest"
// (and served), and JSON cannot store a NaN, so one such value would
// otherwise fail every checkpoint of the job.
func plausible(tr evaluate.Trial) evaluate.Trial {
	bad := func(v float64) bool { return !(v >= 0) || math.IsInf(v, 0) }
	why := ""
	note := func(format string, v float64) {
		if why == "" {
			why = fmt.Sprintf(format, v)
		}
	}
	if bad(tr.Time) || (tr.OK() && tr.Time == 0) {
		note("a time of %v ms", tr.Time)
	}
	for _, t := range tr.Times {
		if bad(t) {
			note("a run of %v ms", t)
		}
	}
	if bad(tr.EnergyMJ) {
		note("an energy of %v mJ", tr.EnergyMJ)
	}
	if bad(tr.PowerW) {
		note("a power of %v W", tr.PowerW)
	}
	if why == "" {
		return tr
	}
	if tr.OK() {
		tr.Status, tr.Error = evaluate.StatusRuntime, "the evaluator reported "+why+": not a measurement"
	}
	tr.Time, tr.Times, tr.EnergyMJ, tr.PowerW = 0, nil, 0, 0
	return tr
}
