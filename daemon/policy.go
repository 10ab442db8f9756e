package daemon

import (
	"math"
	"net/url"
	"strconv"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/store"
)

// policy is a lookup's ?objective=&max_slowdown=: which config of a job's
// (time, energy) front to answer with.
type policy struct {
	obj         evaluate.Objective
	maxSlowdown float64 // < 0: no limit
}

// parsePolicy reads the policy of a lookup; nil when it names none.
func parsePolicy(q url.Values) (*policy, error) {
	o, hasObj := q["objective"]
	m, hasMax := q["max_slowdown"]
	if !hasObj && !hasMax {
		return nil, nil
	}
	if !hasObj {
		return nil, sockapi.Invalidf("max_slowdown: needs objective (e.g. objective=energy&max_slowdown=0.05)")
	}
	obj, err := evaluate.ParseObjective(o[0])
	if err != nil {
		return nil, sockapi.Invalidf("%v", err)
	}
	p := &policy{obj: obj, maxSlowdown: -1}
	if hasMax {
		x, err := strconv.ParseFloat(m[0], 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, sockapi.Invalidf("max_slowdown %q: want a fraction >= 0, e.g. 0.05 for 5%%", m[0])
		}
		p.maxSlowdown = x
	}
	return p, nil
}

// frontAnswer is the point a policy chose and how it compares.
type frontAnswer struct {
	api.FrontChoice
	chosen evaluate.Point
}

// choose applies p to the job's served record: the chosen point, or a
// note saying why there is none to choose from. A nil policy chooses
// nothing.
func (p *policy) choose(sv store.Served) (*frontAnswer, string) {
	if p == nil {
		return nil, ""
	}
	if len(sv.Front) == 0 {
		return nil, "objective " + p.obj.String() + " not applied: the job has no certified (time, energy) front (its device gave no energy readings, or none of its front is verified yet); this is the job's own served config"
	}
	pts := make([]evaluate.Point, len(sv.Front))
	for i, f := range sv.Front {
		pts[i] = evaluate.Point{Key: f.Key, TimeMS: f.TimeMS, EnergyMJ: f.EnergyMJ, Certificate: f.Certificate}
	}
	c, ok := evaluate.Choose(pts, p.obj, p.maxSlowdown)
	if !ok {
		return nil, "objective " + p.obj.String() + " chose nothing from the front; this is the job's own served config"
	}
	fastest := pts[0]
	for _, q := range pts {
		if q.TimeMS < fastest.TimeMS {
			fastest = q
		}
	}
	a := &frontAnswer{chosen: c, FrontChoice: api.FrontChoice{
		Objective: p.obj.String(), Points: len(pts), EnergyMJ: c.EnergyMJ,
		FastestKey: fastest.Key, FastestMS: fastest.TimeMS, FastestEnergyMJ: fastest.EnergyMJ,
		Slowdown: c.TimeMS/fastest.TimeMS - 1, EnergySaved: 1 - c.EnergyMJ/fastest.EnergyMJ,
	}}
	if p.maxSlowdown >= 0 {
		m := p.maxSlowdown
		a.MaxSlowdown = &m
	}
	return a, ""
}
