package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// certsView lists the job's certificates, the served one's checks with
// their inputs and results (the margins), and revocations.
func certsView(b *strings.Builder, j *job) {
	if len(j.certs) == 0 {
		if j.served != nil && j.served.Certificate != "" {
			b.WriteString(empty("The served config names certificate %s, which the certificate listing did not include.", short(j.served.Certificate)))
			return
		}
		b.WriteString(empty("No certificate issued for this job: nothing has passed verification, so the default is served."))
		return
	}
	b.WriteString(`<table class="plain"><thead><tr><th>id</th><th>config</th><th>certified ms</th><th>issued</th><th>issuer</th><th>state</th></tr></thead><tbody>`)
	for _, c := range j.certs {
		state := "valid"
		switch {
		case c.Revoked:
			state = "revoked"
			if c.RevokedAt != nil {
				state += " " + c.RevokedAt.UTC().Format("2006-01-02 15:04")
			}
			if c.Reason != "" {
				state += ": " + c.Reason
			}
		case c.Served:
			state = "served"
		}
		class := "cert-" + strings.Fields(state)[0]
		fmt.Fprintf(b, `<tr class="%s"><td title="%s">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			class, esc(c.ID), esc(short(c.ID)), esc(c.Key), num(c.TimeMS), esc(c.IssuedAt.UTC().Format("2006-01-02 15:04:05")), esc(short(c.Issuer)), esc(state))
	}
	b.WriteString(`</tbody></table>`)
	var served *Cert
	for i := range j.certs {
		if j.certs[i].Served {
			served = &j.certs[i]
			break
		}
	}
	if served == nil {
		b.WriteString(empty("No certificate is served now (revoked, or superseded): the job answers with its default."))
		return
	}
	fmt.Fprintf(b, `<h4>Served certificate %s: checks</h4>`, esc(short(served.ID)))
	if l := served.Latency; l != nil {
		fmt.Fprintf(b, `<p class="note">Latency: median %s ms over %d samples, 95%% CI %s–%s ms.</p>`, num(l.MedianMS), l.Samples, num(l.CILowMS), num(l.CIHighMS))
	}
	servedFlag(b, j)
	if len(served.Checks) == 0 {
		b.WriteString(empty("The certificate's body was not fetched, so its checks are not shown."))
		return
	}
	b.WriteString(`<table class="plain checks"><thead><tr><th>check</th><th>result</th><th>inputs</th><th>results (margins)</th><th>note</th></tr></thead><tbody>`)
	for _, ch := range served.Checks {
		res, class := "passed", "st-ok"
		switch {
		case ch.NotChecked != "":
			res, class = "not checked: "+ch.NotChecked, "st-constraints"
		case !ch.Passed:
			res, class = "failed", "st-runtime"
		}
		fmt.Fprintf(b, `<tr><td>%s</td><td class="%s">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(ch.Name), class, esc(res), esc(kv(ch.Inputs)), esc(kv(ch.Results)), esc(ch.Note))
	}
	b.WriteString(`</tbody></table>`)
}

// kv writes a map as "a=1, b=2" in key order.
func kv(m map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		s := fmt.Sprint(v)
		if f, ok := v.(float64); ok {
			s = num(f)
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, ", ")
}

func short(id string) string {
	if len(id) > 16 {
		return id[:16]
	}
	return id
}

// tableData is a trial table as the page's script reads it.
type tableData struct {
	Cols  []string `json:"cols"`
	Num   []bool   `json:"num"` // numeric column: sorts as numbers
	Rows  [][]any  `json:"rows"`
	Total int      `json:"total"`
	// AtCol is the column of Unix seconds the script shows as UTC
	// date-times (shorter in the page than the text).
	AtCol int `json:"at_col"`
}

// trialsTable writes the job's trials as JSON that the page's script
// renders as a sortable, paged table (a DOM row per trial would make a
// 18,000-trial page slow to open), with counts by status.
func trialsTable(b *strings.Builder, id string, j *job) {
	if len(j.trials) == 0 {
		b.WriteString(empty("No trials."))
		return
	}
	fmt.Fprintf(b, `<p class="note">%d trials: `, len(j.trials))
	counts := statusCounts(j.trials)
	for i, part := range strings.Split(counts, ", ") {
		if i > 0 {
			b.WriteString(" ")
		}
		st := strings.Fields(part)[0]
		fmt.Fprintf(b, `<span class="chip st-%s">%s</span>`, esc(st), esc(part))
	}
	b.WriteString(`</p>`)
	params := j.params
	for _, t := range j.trials {
		if splitKey(t.Key, params) == nil {
			params = nil
			break
		}
	}
	hasEnergy := false
	for _, t := range j.trials {
		hasEnergy = hasEnergy || t.EnergyMJ > 0
	}
	d := tableData{Cols: []string{"#"}, Num: []bool{true}, Total: len(j.trials)}
	if params == nil {
		d.Cols, d.Num = append(d.Cols, "key"), append(d.Num, false)
	}
	for _, p := range params {
		d.Cols, d.Num = append(d.Cols, p), append(d.Num, numericParam(j, p, params))
	}
	d.Cols = append(d.Cols, "status", "time_ms")
	d.Num = append(d.Num, false, true)
	if hasEnergy {
		d.Cols, d.Num = append(d.Cols, "energy_mj"), append(d.Num, true)
	}
	hasError := false
	for _, t := range j.trials {
		hasError = hasError || t.Error != ""
	}
	d.Cols = append(d.Cols, "cost_s", "cycle", "at")
	d.Num = append(d.Num, true, true, true)
	d.AtCol = len(d.Cols) - 1
	if hasError {
		d.Cols, d.Num = append(d.Cols, "error"), append(d.Num, false)
	}
	for i, t := range j.trials {
		row := []any{i + 1}
		if params == nil {
			row = append(row, t.Key)
		} else {
			for _, v := range splitKey(t.Key, params) {
				if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
					row = append(row, f)
				} else {
					row = append(row, v)
				}
			}
		}
		row = append(row, t.Status, finite(t.TimeMS))
		if hasEnergy {
			row = append(row, finite(t.EnergyMJ))
		}
		var at any
		if !t.At.IsZero() {
			at = t.At.Unix()
		}
		row = append(row, finite(t.CostS), t.Cycle, at)
		if hasError {
			row = append(row, t.Error)
		}
		d.Rows = append(d.Rows, row)
	}
	js, err := json.Marshal(d)
	if err != nil { // only for values json cannot encode, which finite rules out
		panic("report: encode trial table: " + err.Error())
	}
	fmt.Fprintf(b, `<script type="application/json" id="%s">%s</script><div class="trials-table" data-src="%s"></div>`, id, js, id)
}

// finite is v to six significant digits (what a table reads, and a
// smaller page), or nil (JSON null, an empty cell) for zero and
// non-finite values.
func finite(v float64) any {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// numericParam reports whether every value of parameter p is a number.
func numericParam(j *job, p string, params []string) bool {
	i := slices.Index(params, p)
	for _, t := range j.trials {
		if _, err := strconv.ParseFloat(splitKey(t.Key, params)[i], 64); err != nil {
			return false
		}
	}
	return true
}
