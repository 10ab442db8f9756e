package report

import (
	"encoding/json"
	"fmt"
	"strings"
)

// memPlanSection writes the memory plans the caller made for the report:
// per graph its peak against the lower bound for both greedy baselines and
// the plan kept, and, where asked for, the prefetch schedule's makespans
// and the cache-miss estimate.
func memPlanSection(b *strings.Builder, plans []MemPlan) {
	b.WriteString(`<section class="view memplans" id="memplans"><h2>Memory plans</h2>`)
	defer b.WriteString(`</section>`)
	if len(plans) == 0 {
		b.WriteString(empty("No memory plans: quasimd plans graphs on request and keeps none; quasimctl report --memgraph FILE adds a graph's plan here."))
		return
	}
	ratio := func(v, lb int64) string {
		if lb <= 0 {
			return "–"
		}
		return num(float64(v) / float64(lb))
	}
	b.WriteString(`<table class="plain"><thead><tr><th>graph</th><th>ops</th><th>tensors</th><th>lower bound (bytes)</th><th>greedy by size / bound</th><th>greedy by breadth / bound</th><th>plan kept / bound</th><th>kept</th><th>prefetch makespan / compute only</th><th>copy, then compute / compute only</th><th>misses per level</th><th>made</th></tr></thead><tbody>`)
	for _, m := range plans {
		p := m.Plan
		pre, serial, misses := "–", "–", "–"
		if len(p.Schedule) > 0 {
			var sc struct {
				Makespan    int64 `json:"makespan_ns"`
				NoOverlap   int64 `json:"no_overlap_ns"`
				ComputeOnly int64 `json:"compute_only_ns"`
			}
			if json.Unmarshal(p.Schedule, &sc) == nil && sc.ComputeOnly > 0 {
				pre, serial = ratio(sc.Makespan, sc.ComputeOnly), ratio(sc.NoOverlap, sc.ComputeOnly)
			}
		}
		if len(p.Misses) > 0 {
			var me struct {
				Levels []struct {
					Name   string `json:"name"`
					Refs   int64  `json:"refs"`
					Misses int64  `json:"misses"`
				} `json:"levels"`
			}
			if json.Unmarshal(p.Misses, &me) == nil {
				var parts []string
				for _, l := range me.Levels {
					parts = append(parts, fmt.Sprintf("%s %d of %d", esc(l.Name), l.Misses, l.Refs))
				}
				misses = strings.Join(parts, "; ")
			}
		}
		kept := p.Strategy
		if p.Stopped {
			kept += " (search stopped)"
		}
		name := p.Name
		if name == "" {
			name = m.File
		}
		fmt.Fprintf(b, `<tr><td title="%s">%s</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(m.File), esc(name), p.Ops, p.Tensors, p.LowerBound, ratio(p.BySize, p.LowerBound), ratio(p.ByBreadth, p.LowerBound),
			ratio(p.Peak, p.LowerBound), esc(kept), pre, serial, misses, esc(m.Where))
	}
	b.WriteString(`</tbody></table>`)
}
