package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/genome"
)

// t1Spec is what a FAIR T1 file's KernelSpecification says, as read by
// t1Kernel.
type t1Spec struct {
	Language        string         `json:"Language"`
	CompilerOptions []string       `json:"CompilerOptions"`
	KernelName      string         `json:"KernelName"`
	KernelFile      string         `json:"KernelFile"`
	GlobalSizeType  string         `json:"GlobalSizeType"`
	LocalSize       map[string]any `json:"LocalSize"`
	GlobalSize      map[string]any `json:"GlobalSize"`
	GridDivX        []any          `json:"GridDivX"`
	GridDivY        []any          `json:"GridDivY"`
	GridDivZ        []any          `json:"GridDivZ"`
	Arguments       []t1Arg        `json:"Arguments"`
}

type t1Arg struct {
	Name       string   `json:"Name"`
	Type       string   `json:"Type"`
	Size       any      `json:"Size"`
	MemoryType string   `json:"MemoryType"`
	AccessType string   `json:"AccessType"`
	FillType   string   `json:"FillType"`
	FillValue  *float64 `json:"FillValue"`
	RandomSeed *int64   `json:"RandomSeed"`
	Output     any      `json:"Output"`
}

// t1Base is an OpenCL kernel read from a T1 file: as much of it as could
// be read, and what could not, each problem tagged with the opencl key a
// spec beside the file may give to replace it.
type t1Base struct {
	k           *opencl.Kernel
	params      []genome.Param
	constraints []string
	problem     []int
	src         string   // the kernel file's text; "" when unread
	sums        []string // its SHA-256
	problems    []t1Problem
}

type t1Problem struct {
	key string // the opencl key that replaces the field: source, args, ...
	err error  // a *FieldError naming the T1 field
}

// isOpenCLT1 reports whether a T1 file's kernel is OpenCL.
func isOpenCLT1(data []byte) bool {
	var f struct {
		KernelSpecification struct {
			Language string `json:"Language"`
		} `json:"KernelSpecification"`
	}
	return json.Unmarshal(data, &f) == nil && strings.EqualFold(f.KernelSpecification.Language, "OpenCL")
}

// t1Kernel reads the OpenCL kernel of T1 file path (its kernel file is
// relative to it). Only a file that does not parse is an error; a field
// that cannot be used is a problem of the base.
func t1Kernel(path string, t *genome.T1, data []byte) (*t1Base, error) {
	var f struct {
		KernelSpecification t1Spec `json:"KernelSpecification"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, &FieldError{File: path, Field: "KernelSpecification", Err: err}
	}
	ks := f.KernelSpecification
	b := &t1Base{k: &opencl.Kernel{Name: t.Name, Kernel: ks.KernelName, Options: ks.CompilerOptions}, constraints: t.Constraints, problem: t.ProblemSize}
	problem := func(key, field, format string, args ...any) {
		b.problems = append(b.problems, t1Problem{key, &FieldError{File: path, Field: "KernelSpecification." + field, Err: fmt.Errorf(format, args...)}})
	}
	for _, p := range t.Params {
		b.params = append(b.params, p)
		op := opencl.Param{Name: p.Name}
		for _, v := range p.Values {
			op.Values = append(op.Values, v.Native())
		}
		op.Default = p.Values[p.Default].Native()
		b.k.Params = append(b.k.Params, op)
	}
	// The source.
	if ks.KernelFile == "" {
		problem("source", "KernelFile", "missing")
	} else {
		src := ks.KernelFile
		if !filepath.IsAbs(src) {
			src = filepath.Join(filepath.Dir(path), src)
		}
		text, err := os.ReadFile(filepath.Clean(src))
		if err != nil {
			problem("source", "KernelFile", "%q: %v (beside %s)", ks.KernelFile, pathErr(err), filepath.Base(path))
		} else {
			b.k.Sources, b.src = []string{filepath.Clean(src)}, string(text)
			sum := sha256.Sum256(text)
			b.sums = []string{hex.EncodeToString(sum[:])}
			if ks.KernelName != "" && !opencl.DefinesKernel(b.src, ks.KernelName) {
				problem("kernel", "KernelName", "%q: no __kernel of that name in %s", ks.KernelName, ks.KernelFile)
			}
		}
	}
	for _, o := range ks.CompilerOptions {
		// A CUDA option in an OpenCL kernel's list (the hub's gemm T1 has
		// -std=c++11): the OpenCL compiler refuses it for every config.
		if strings.HasPrefix(o, "-std=") || strings.HasPrefix(o, "--") {
			problem("options", "CompilerOptions", "%q is not an OpenCL compiler option (OpenCL C takes -cl-std=CL1.2 and the like)", o)
		}
	}
	// The launch: GlobalSize is the problem in work-items; the grid
	// divisors are GridDivX/Y/Z when given, else the local size.
	axes := []string{"X", "Y", "Z"}
	dims := 0
	for i, ax := range axes {
		if v, ok := ks.GlobalSize[ax]; ok && i == dims {
			e := exprText(v)
			if dims > 0 && e == "1" && ks.GlobalSize[axes[min(i+1, 2)]] == nil {
				break
			}
			b.k.ProblemSize = append(b.k.ProblemSize, e)
			dims++
		}
	}
	// Trailing dims of 1 add nothing to the launch.
	for len(b.k.ProblemSize) > 1 && b.k.ProblemSize[len(b.k.ProblemSize)-1] == "1" && exprText(ks.LocalSize[axes[len(b.k.ProblemSize)-1]]) == "1" {
		b.k.ProblemSize = b.k.ProblemSize[:len(b.k.ProblemSize)-1]
	}
	if len(b.k.ProblemSize) == 0 {
		problem("problem_size", "GlobalSize", "no X")
	}
	var blocks []string
	for _, ax := range axes[:max(len(b.k.ProblemSize), 1)] {
		blocks = append(blocks, exprText(ks.LocalSize[ax]))
	}
	// A local size names a parameter or gives a number.
	b.k.BlockSizeNames = []string{"1", "1", "1"}
	for i, e := range blocks {
		if e != "" {
			b.k.BlockSizeNames[i] = e
		}
	}
	for i, divs := range [][]any{ks.GridDivX, ks.GridDivY, ks.GridDivZ} {
		switch {
		case divs != nil:
			b.k.GridDiv[i] = []string{}
			for _, d := range divs {
				b.k.GridDiv[i] = append(b.k.GridDiv[i], exprText(d))
			}
		case strings.EqualFold(ks.GlobalSizeType, "CUDA"):
			b.k.GridDiv[i] = []string{} // GlobalSize counts blocks
		case i < len(blocks) && blocks[i] != "" && !genome.IsName(blocks[i]):
			b.k.GridDiv[i] = []string{blocks[i]} // a local size given as a number
		}
	}
	// A local size is a parameter or a number.
	for i, e := range blocks {
		_, err := strconv.Atoi(e)
		switch {
		case e == "" || err == nil:
		case !genome.IsName(e):
			problem("block_size_names", fmt.Sprintf("LocalSize.%s", axes[i]), "%q: quasim takes a parameter name or a number as a work-group size", e)
		case !slices.ContainsFunc(t.Params, func(p genome.Param) bool { return p.Name == e }):
			problem("block_size_names", fmt.Sprintf("LocalSize.%s", axes[i]), "%q is not a tuning parameter, so the work-group size is unknown", e)
		}
	}
	// The arguments.
	if len(ks.Arguments) == 0 {
		problem("args", "Arguments", "none")
	}
	for i, a := range ks.Arguments {
		arg, err := t1ArgOf(a)
		if err != nil {
			problem("args", fmt.Sprintf("Arguments[%d] (%s).%s", i, a.Name, err.field), "%s", err.msg)
			continue
		}
		b.k.Args = append(b.k.Args, arg)
	}
	if len(b.k.Args) == len(ks.Arguments) && b.src != "" {
		if decls, ok := opencl.KernelParams(b.src, ks.KernelName); ok {
			if err := opencl.CheckArgs(b.k.Args, decls, ks.KernelName); err != nil {
				var fe *opencl.FieldError
				errors.As(err, &fe)
				field := strings.Replace(fe.Field, "args", "Arguments", 1)
				problem("args", field, "%v: the argument list does not match the kernel", fe.Err)
			}
		}
	}
	return b, nil
}

type t1ArgErr struct{ field, msg string }

// t1ArgOf turns a T1 argument into a kernel argument.
func t1ArgOf(a t1Arg) (opencl.Arg, *t1ArgErr) {
	out := opencl.Arg{Name: a.Name}
	typ := strings.ToLower(a.Type)
	if typ == "bool" {
		typ = "uint8"
	}
	if _, ok := opencl.Types[typ]; !ok {
		return out, &t1ArgErr{"Type", fmt.Sprintf("%q: quasim fills scalar element types (%s), not vector or custom types", a.Type, strings.Join(opencl.TypeNames(), ", "))}
	}
	out.Type = typ
	value := 0.0
	if a.FillValue != nil {
		value = *a.FillValue
	}
	switch a.MemoryType {
	case "Scalar":
		out.Value = strconv.FormatFloat(value, 'g', -1, 64)
		if t := opencl.Types[typ]; !t.Float && value != math.Trunc(value) {
			return out, &t1ArgErr{"FillValue", fmt.Sprintf("%v for an integer scalar", value)}
		}
		if !opencl.Types[typ].Float && !strings.ContainsAny(out.Value, "e") {
			break
		}
		if opencl.Types[typ].Float && !strings.ContainsAny(out.Value, ".eE") {
			out.Value += ".0" // a float expression, not an int one
		}
	case "Vector":
		size := exprText(a.Size)
		if size == "" {
			return out, &t1ArgErr{"Size", "missing for a Vector"}
		}
		out.Size = size
		switch a.FillType {
		case "Constant":
			out.Fill = opencl.Fill{Kind: opencl.FillConstant, Value: value}
		case "Random":
			out.Fill = opencl.Fill{Kind: opencl.FillRandom, Value: value}
			if a.RandomSeed != nil {
				out.Fill.Seed = uint64(*a.RandomSeed)
			}
		case "":
			out.Fill = opencl.Fill{Kind: opencl.FillZero}
		default:
			return out, &t1ArgErr{"FillType", fmt.Sprintf("%q: quasim fills Constant and Random; give args in a spec beside the file", a.FillType)}
		}
		out.Output = truthy(a.Output) || a.AccessType == "WriteOnly"
	default:
		return out, &t1ArgErr{"MemoryType", fmt.Sprintf("%q: quasim passes Scalar and Vector arguments", a.MemoryType)}
	}
	return out, nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x == "1" || strings.EqualFold(x, "true")
	}
	return false
}

// exprText is a T1 size field (a number or an expression string) as an
// expression.
func exprText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// problemsLeft are the problems of b that no key given replaces.
func (b *t1Base) problemsLeft(given map[string]bool) []error {
	var out []error
	for _, p := range b.problems {
		if !given[p.key] {
			out = append(out, p.err)
		}
	}
	return out
}

// t1OpenCL makes a bare OpenCL T1 spec tunable from its own fields when
// they hold; otherwise it stays listed, and Note says by field why not.
func (s *Spec) t1OpenCL(path string, data []byte) {
	b, err := t1Kernel(path, s.T1, data)
	if err != nil {
		s.Note = err.Error()
		return
	}
	if len(s.Problems) > 0 {
		b.k.ProblemDims = nil
	}
	errs := b.problemsLeft(nil)
	if len(errs) == 0 {
		if _, err := b.k.Compile(); err != nil {
			errs = append(errs, &FieldError{File: path, Field: "KernelSpecification", Err: err})
		}
	}
	if len(errs) > 0 {
		s.Note = "the OpenCL kernel is listed, not tuned: " + joinErrs(errs) + "; a spec beside the file with t1: " + filepath.Base(path) + " may give what is wrong"
		return
	}
	b.k.Constraints = nil // the spec's job applies the T1's conditions
	s.Evaluator, s.OpenCL, s.openclSums = "opencl", b.k, b.sums
}

func joinErrs(errs []error) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// decodeT1Ref reads the T1 file a spec's t1 key names, relative to the
// spec's folder, as the base of its opencl section.
func (s *Spec) decodeT1Ref(d decoder, n *node) (*t1Base, error) {
	name, err := d.str("t1", n)
	if err != nil {
		return nil, err
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(s.Source), path)
	}
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, d.errf("t1", n, "%q: %v", name, pathErr(err))
	}
	t, err := genome.ParseT1(path, data)
	if err != nil {
		return nil, d.wrap("t1", n, err)
	}
	if !isOpenCLT1(data) {
		return nil, d.errf("t1", n, "%q: KernelSpecification.Language is not OpenCL", name)
	}
	return t1Kernel(path, t, data)
}
