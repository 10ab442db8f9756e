package causal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// chromeEvent is one entry of traceEvents.
type chromeEvent struct {
	Name    string      `json:"name"`
	Cat     string      `json:"cat"`
	Ph      string      `json:"ph"`
	Ts      json.Number `json:"ts"`
	Dur     json.Number `json:"dur"`
	Pid     key         `json:"pid"`
	Tid     key         `json:"tid"`
	ID      key         `json:"id"`
	ID2     key         `json:"id2"`
	Bp      string      `json:"bp"`
	BindID  key         `json:"bind_id"`
	FlowIn  bool        `json:"flow_in"`
	FlowOut bool        `json:"flow_out"`
	Args    struct {
		InputDims   json.RawMessage `json:"Input Dims"`
		Correlation key             `json:"correlation"`
		// cuda_sync records (cudaSyncCat)
		Stream       key `json:"stream"`
		WaitOnStream key `json:"wait_on_stream"`
		WaitOnRecord key `json:"wait_on_cuda_event_record_corr_id"`
	} `json:"args"`
}

// key is a pid, tid or id: a number, a string or an object (id2), kept as
// text.
type key string

func (k *key) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*k = key(s)
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*k = key(buf.String())
	return nil
}

// eachEvent calls fn with each event of a trace, in file order, without
// holding them all (nor the trace: it reads r as it goes).
func eachEvent(r io.Reader, fn func(*chromeEvent)) (cutOff bool, err error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrInvalidTrace, err)
	}
	if tok == json.Delim('[') {
		// The array form may be cut off (a trace being written): an
		// unexpected end is the end.
		err := eachInArray(dec, fn)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("%w: %v", ErrInvalidTrace, err)
		}
		return err != nil, nil
	}
	if tok != json.Delim('{') {
		return false, fmt.Errorf("%w: neither an object with traceEvents nor an array", ErrInvalidTrace)
	}
	seen := false
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrInvalidTrace, err)
		}
		if k != "traceEvents" {
			if len(keys) < 8 {
				keys = append(keys, fmt.Sprint(k))
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false, fmt.Errorf("%w: %q: %v", ErrInvalidTrace, k, err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return false, fmt.Errorf("%w: traceEvents is not an array", ErrInvalidTrace)
		}
		if err := eachInArray(dec, fn); err != nil {
			return false, fmt.Errorf("%w: traceEvents: %v", ErrInvalidTrace, err)
		}
		seen = true
	}
	if _, err := dec.Token(); err != nil {
		return false, fmt.Errorf("%w: %v", ErrInvalidTrace, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%w: data after the trace object", ErrInvalidTrace)
	}
	if !seen {
		what := "no keys"
		if len(keys) > 0 {
			what = "keys " + strings.Join(keys, ", ")
		}
		return false, fmt.Errorf("%w: no traceEvents (an object with %s): not a Chrome trace event file; "+
			"for PyTorch, import what torch.profiler writes with export_chrome_trace (an execution trace's nodes are not events)",
			ErrInvalidTrace, what)
	}
	return false, nil
}

// eachInArray decodes the elements of an array whose "[" was read, and its
// "]".
func eachInArray(dec *json.Decoder, fn func(*chromeEvent)) error {
	for i := 0; dec.More(); i++ {
		var e chromeEvent
		if err := dec.Decode(&e); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("event %d is not a trace event (an object with name, ph, ts): %w", i, err)
			}
			return err
		}
		fn(&e)
	}
	_, err := dec.Token()
	return err
}

var errTime = errors.New("not a time in µs within ±2^62 ns")

// micros converts a decimal number of µs to ns exactly when it has at most
// three decimals (timestamps since the epoch have more digits than a
// float64 holds), rounding beyond.
func micros(n json.Number) (int64, error) {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(digits, ".")
	if whole == "" || strings.ContainsAny(digits, "eE+-") || len(whole) > 18 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.Abs(f*1000) >= MaxTime {
			return 0, errTime
		}
		return int64(math.Round(f * 1000)), nil
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w >= MaxTime/1000 {
		return 0, errTime
	}
	frac3 := (frac + "000")[:3]
	f, err := strconv.ParseInt(frac3, 10, 64)
	if err != nil || strings.Trim(frac, "0123456789") != "" {
		return 0, errTime
	}
	ns := w*1000 + f
	if len(frac) > 3 && frac[3] >= '5' {
		ns++
	}
	if ns >= MaxTime {
		return 0, errTime
	}
	if neg {
		ns = -ns
	}
	return ns, nil
}
