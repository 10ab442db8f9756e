package precision

import (
	"fmt"
	"strings"
)

// Stage is where in a kernel a precision applies: the storage of its
// inputs, of its intermediate values, its accumulators, or its output.
type Stage uint8

// The stages of a kernel.
const (
	StageInput Stage = iota
	StageIntermediate
	StageAccumulation
	StageOutput
	numStages
)

var stageNames = [numStages]string{"input", "intermediate", "accumulation", "output"}

// Stages lists every stage, in the order data flows through a kernel.
func Stages() []Stage { return []Stage{StageInput, StageIntermediate, StageAccumulation, StageOutput} }

func (s Stage) String() string {
	if s < numStages {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// ParseStage reads a stage name ("acc" is accumulation).
func ParseStage(name string) (Stage, error) {
	t := strings.ToLower(strings.TrimSpace(name))
	if t == "acc" {
		return StageAccumulation, nil
	}
	for i, n := range stageNames {
		if t == n {
			return Stage(i), nil
		}
	}
	return 0, fmt.Errorf("precision stage %q: want one of %s", name, strings.Join(stageNames[:], ", "))
}

// Accumulators beyond the formats: a float64 accumulator (rounded once, at
// the end) and a Kahan-compensated float32 one. Both are more accurate
// than FP32, so they rank before it.
const (
	AccFP64  = "fp64"
	AccKahan = "kahan"
)

// accWide ranks the accumulators more accurate than FP32.
var accWide = []string{AccFP64, AccKahan}

// Rank is value's ordinal in stage s, from the most accurate (0): a
// format's Order for storage stages; for accumulation fp64 (or float64),
// then kahan, then the float formats FP32, FP16 and BF16 (an integer or
// FP8 accumulator is not offered). A search moving along a precision
// parameter moves along these ranks. The error names what s accepts.
func (s Stage) Rank(value string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(value))
	if s == StageAccumulation {
		switch t {
		case "fp64", "float64", "f64", "double":
			return 0, nil
		case AccKahan:
			return 1, nil
		}
		f, err := ParseFormat(t)
		if err != nil || !(f == FP32 || f == FP16 || f == BF16) {
			return 0, fmt.Errorf("accumulator %q: want one of %s", value, strings.Join(s.Names(), ", "))
		}
		return len(accWide) + f.Order(), nil
	}
	if s >= numStages {
		return 0, fmt.Errorf("precision %q: unknown stage %d", value, uint8(s))
	}
	f, err := ParseFormat(t)
	if err != nil {
		return 0, fmt.Errorf("%s precision %q: want one of %s", s, value, strings.Join(s.Names(), ", "))
	}
	return f.Order(), nil
}

// Names lists the canonical values of stage s, most accurate first.
func (s Stage) Names() []string {
	if s == StageAccumulation {
		return append(append([]string{}, accWide...), FP32.String(), FP16.String(), BF16.String())
	}
	return names[:]
}

// CheckOrder checks that values are values of stage s, each named once
// and listed from the most accurate to the least, as a precision
// parameter keeps them.
func (s Stage) CheckOrder(values []string) error {
	prev := -1
	for i, v := range values {
		r, err := s.Rank(v)
		if err != nil {
			return err
		}
		if r == prev {
			return fmt.Errorf("%s precision %q: listed twice (as %q)", s, v, values[i-1])
		}
		if r < prev {
			return fmt.Errorf("%s precision %q: listed after the less accurate %q (want the most accurate first: %s)", s, v, values[i-1], strings.Join(s.Names(), ", "))
		}
		prev = r
	}
	return nil
}
