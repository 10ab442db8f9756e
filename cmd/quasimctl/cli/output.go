package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes tab-separated rows as aligned columns; call flush at the end.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cols ...string) {
	fmt.Fprintln(t.tw, strings.Join(cols, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// fmtMS formats milliseconds to sig significant digits; zero is "-".
func fmtMS(v float64, sig int) string {
	if v == 0 {
		return "-"
	}
	return fmtSig(v, sig)
}

// fmtSig formats v to sig significant digits without an exponent.
func fmtSig(v float64, sig int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	d := sig - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	d = min(max(d, 0), 9)
	return strconv.FormatFloat(v, 'f', d, 64)
}

// fmtTime formats t in local time to the second; the zero time is "-".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return fmtTime(*t)
}

// fmtDuration rounds d for humans: whole seconds above a minute, tenths below.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// dash stands in for empty strings in tables.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtValue formats a config value decoded from JSON.
func fmtValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// keyValues splits a config key (its values joined by commas in parameter
// order) into one value per name; nil when it does not split that way.
func keyValues(key string, names []string) []string {
	if len(names) == 0 || key == "" {
		return nil
	}
	v := strings.Split(key, ",")
	if len(v) != len(names) {
		return nil
	}
	return v
}

// namedKey writes a config key as name=value pairs ("bx=16,kind=tiled"),
// so a table shows which parameter each value sets; the bare key when it
// does not split into one value per name.
func namedKey(key string, names []string) string {
	v := keyValues(key, names)
	if v == nil {
		return dash(key)
	}
	pairs := make([]string, len(v))
	for i := range v {
		pairs[i] = names[i] + "=" + v[i]
	}
	return strings.Join(pairs, ",")
}

// writeFileAtomic writes data to path (mode 0644) through a temporary file
// beside it, so a reader (quasimd at start) never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// fmtRatio formats a ratio with its 95% interval: "2.31× (95% CI 2.10–2.55)".
func fmtRatio(r, lo, hi float64) string {
	s := fmtSig(r, 3) + "×"
	if lo > 0 && hi > 0 {
		s += " (95% CI " + fmtSig(lo, 3) + "–" + fmtSig(hi, 3) + ")"
	}
	return s
}
