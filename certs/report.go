package certs

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// maxListReport is how many elements of a list Report prints.
const maxListReport = 10

// Report writes c for people: its verdict, job, config (param = value,
// sorted), issue time, issuer and id, each check with PASS, FAIL or NOT
// CHECKED (and why), its note, inputs and results (sorted), and for parity
// and error_bound checks the margin between the limit and the measured
// error, then the latency distribution. Strings from the certificate that are not printable are
// quoted. It does not verify c.
func (c *Certificate) Report(w io.Writer) error {
	if c == nil {
		return fmt.Errorf("report certificate: %w: nil certificate", ErrMalformed)
	}
	r := &reporter{w: w}
	passed, notMade := 0, 0
	for _, ch := range c.Checks {
		switch {
		case ch.NotMade() != "":
			notMade++
		case ch.Passed:
			passed++
		}
	}
	verdict := "FAIL"
	if c.Passed() {
		verdict = "PASS"
	}
	if notMade > 0 {
		r.printf("certificate: %s (%d of %d checks made passed; %d not made)\n", verdict, passed, len(c.Checks)-notMade, notMade)
	} else {
		r.printf("certificate: %s (%d of %d checks passed)\n", verdict, passed, len(c.Checks))
	}

	r.printf("job:\n")
	r.printf("  kernel:     %s\n", text(c.Job.Kernel))
	r.printf("  spec hash:  %s\n", text(c.Job.SpecHash))
	r.printf("  problem:    %s\n", text(c.Job.Problem))
	r.printf("  device:     %s\n", text(c.Job.Device))
	if len(c.Job.Details) > 0 {
		r.printf("  details:\n")
		for _, k := range slices.Sorted(maps.Keys(c.Job.Details)) {
			r.printf("    %s = %s\n", text(k), text(c.Job.Details[k]))
		}
	}

	r.printf("config: %s\n", text(c.Key))
	for _, k := range slices.Sorted(maps.Keys(c.Config)) {
		r.printf("  %s = %s\n", text(k), formatValue(c.Config[k], 0))
	}

	r.printf("issued at:  %s\n", c.IssuedAt.UTC().Format(time.RFC3339Nano))
	r.printf("issuer:     %s\n", text(c.Issuer))
	r.printf("id:         %s\n", text(c.ID))

	r.printf("checks:\n")
	if len(c.Checks) == 0 {
		r.printf("  none\n")
	}
	for _, ch := range c.Checks {
		mark := "FAIL"
		why := ch.NotMade()
		switch {
		case why != "":
			mark = "NOT CHECKED"
		case ch.Passed:
			mark = "PASS"
		}
		r.printf("  %s %s\n", mark, text(ch.Name))
		if why != "" {
			r.printf("    not made: %s\n", text(why))
		}
		if ch.Note != "" {
			r.printf("    note: %s\n", text(ch.Note))
		}
		r.values("inputs", ch.Inputs)
		r.values("results", ch.Results)
		if why == "" {
			for _, m := range margins(ch) {
				r.printf("    %s\n", m)
			}
		}
	}

	l := c.Latency
	r.printf("latency: %d samples\n", l.Samples)
	r.printf("  median:     %s ms\n", ms(l.MedianMS))
	r.printf("  p95:        %s ms\n", ms(l.P95MS))
	r.printf("  95%% CI:     %s - %s ms (bootstrap, of the median)\n", ms(l.CILowMS), ms(l.CIHighMS))
	if len(l.TimesMS) > 0 {
		lo, hi := slices.Min(l.TimesMS), slices.Max(l.TimesMS)
		r.printf("  range:      %s - %s ms over %d recorded times\n", ms(lo), ms(hi), len(l.TimesMS))
	}
	return r.err
}

// reporter writes until the first error.
type reporter struct {
	w   io.Writer
	err error
}

func (r *reporter) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

func (r *reporter) values(title string, m map[string]any) {
	if len(m) == 0 {
		return
	}
	r.printf("    %s:\n", title)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		r.printf("      %s = %s\n", text(k), formatValue(m[k], 0))
	}
}

// margins returns the margin lines of a parity, error_bound or
// error_budget check: how many times the measured error (and for a
// budget, the bound) fits in the allowed one.
func margins(ch Check) []string {
	res := ch.Results
	switch ch.Name {
	case "parity":
		tol, ok := toFloat(res["tolerance"])
		if !ok {
			return nil
		}
		keys := []string{"max_abs_err", "max_rel_err", "max_ulp"}
		if kind := reflect.ValueOf(res["tolerance_kind"]); kind.Kind() == reflect.String {
			switch kind.String() {
			case "abs":
				keys = keys[:1]
			case "rel":
				keys = keys[1:2]
			case "ulp":
				keys = keys[2:]
			}
		}
		var out []string
		for _, k := range keys {
			if e, ok := toFloat(res[k]); ok {
				out = append(out, margin(tol, "tolerance", e, k))
			}
		}
		return out
	case "speedup", "speedup_over_served":
		r, ok1 := toFloat(res["ratio"])
		lo, ok2 := toFloat(res["ci95_low"])
		hi, ok3 := toFloat(res["ci95_high"])
		if ok1 && ok2 && ok3 {
			return []string{fmt.Sprintf("speed-up: %.3g× the baseline (95%% CI %.3g–%.3g, paired rounds)", r, lo, hi)}
		}
	case "error_bound":
		bound, ok1 := toFloat(res["bound"])
		e, ok2 := toFloat(res["measured_err"])
		if ok1 && ok2 {
			return []string{margin(bound, "bound", e, "measured_err")}
		}
	case "error_budget":
		// Both the a-priori bound and the measured error must fit.
		budget, ok := toFloat(ch.Inputs["budget"])
		if !ok {
			return nil
		}
		var out []string
		for _, k := range []string{"bound", "measured_err"} {
			if e, ok := toFloat(res[k]); ok {
				out = append(out, margin(budget, "budget", e, k))
			}
		}
		return out
	}
	return nil
}

// margin formats limit/err as "margin 12.3x (tolerance 1e-05 / max_abs_err 8.13e-07)".
func margin(limit float64, limitName string, err float64, errName string) string {
	detail := fmt.Sprintf("(%s %s / %s %s)", limitName, exact(limit), errName, exact(err))
	switch {
	case err == 0 && limit >= 0:
		return "margin unbounded: the error is 0 " + detail
	case err < 0 || limit < 0:
		return "margin undefined: negative value " + detail
	}
	m := limit / err
	s := "margin " + times(m) + " " + detail
	if m < 1 {
		s += ": over the " + limitName
	}
	return s
}

func times(m float64) string {
	switch {
	case math.IsInf(m, 0):
		return "unbounded"
	case m >= 100:
		return strconv.FormatFloat(m, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(m, 'g', 3, 64) + "x"
}

// exact formats a value as recorded.
func exact(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ms formats a time in milliseconds with 4 significant digits.
func ms(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

// toFloat returns v as a float64 when it is a number.
func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case nil, bool, string:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	}
	return 0, false
}

// formatValue formats a value of Config, Inputs or Results on one line;
// lists longer than maxListReport are cut.
func formatValue(v any, depth int) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" {
			return `""`
		}
		return text(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case json.Number:
		return string(v)
	case fmt.Stringer:
		return text(v.String())
	}
	rv := reflect.ValueOf(v)
	if depth > 8 {
		return "..."
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return "[]"
		}
		n := rv.Len()
		parts := make([]string, 0, min(n, maxListReport)+1)
		for i := 0; i < n && i < maxListReport; i++ {
			parts = append(parts, formatValue(rv.Index(i).Interface(), depth+1))
		}
		if n > maxListReport {
			parts = append(parts, fmt.Sprintf("... (%d values)", n))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			e := rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()))
			parts = append(parts, text(k)+": "+formatValue(e.Interface(), depth+1))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.String:
		return text(rv.String())
	}
	return text(fmt.Sprint(v))
}

// text returns s as it is when every rune prints, else quoted, so that a
// certificate cannot send control sequences to a terminal.
func text(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
