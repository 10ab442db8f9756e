package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/genome"
)

// openclKeys are the keys of a spec's opencl section.
var openclKeys = []string{
	"source", "kernel", "options", "tune_params", "block_size_names", "problem_size",
	"grid_div_x", "grid_div_y", "grid_div_z", "args", "check", "device", "compile_ahead",
	"iterations",
}

// openclSection is a decoded opencl section with the lines of its fields,
// for errors found after decoding.
type openclSection struct {
	k      *opencl.Kernel
	sums   []string       // SHA-256 of each source, for the hash
	lines  map[string]int // field (as opencl.FieldError names it) -> line
	params []genome.Param
	npy    []npyHash // argument files not hashed yet
}

// decodeOpenCL reads the opencl section of an `evaluator: opencl` spec
// (n may be nil with a base). Sources are read (relative to the spec's
// folder) and must define the kernel; expressions are compiled against
// the parameters and the problem's dims. With base, the kernel a T1 file
// describes, every key the section leaves out is the T1 file's, and a
// problem of the T1 file that no key given replaces is the error.
func (s *Spec) decodeOpenCL(d decoder, n *node, base *t1Base) (*openclSection, error) {
	m := &node{kind: nMap}
	if n != nil {
		var err error
		if m, err = d.mapping("opencl", n); err != nil {
			return nil, err
		}
		if err := d.knownKeys("opencl", m, openclKeys); err != nil {
			return nil, err
		}
	}
	sec := &openclSection{k: &opencl.Kernel{Name: s.Name}, lines: map[string]int{}}
	var srcText string
	if base != nil {
		*sec.k = *base.k
		sec.k.Name = s.Name
		sec.params, sec.sums, srcText = base.params, base.sums, base.src
	}
	k := sec.k
	k.ProblemDims = slices.Clone(s.ProblemDims)
	given := map[string]bool{}
	get := func(key string) *node {
		v := m.get(key)
		if v.isNull() {
			return nil
		}
		sec.lines[key] = v.line
		given[key] = true
		return v
	}
	missing := func(key, what string) error {
		return d.errf("opencl."+key, n, "missing: %s", what)
	}
	strs := func(field string, v *node) ([]string, error) {
		items := []*node{v}
		if v.kind == nList {
			items = v.items
		}
		var out []string
		for i, it := range items {
			f := field
			if v.kind == nList {
				f = fmt.Sprintf("%s[%d]", field, i)
			}
			str, err := d.str(f, it)
			if err != nil {
				return nil, err
			}
			sec.lines[strings.TrimPrefix(f, "opencl.")] = it.line
			out = append(out, strings.TrimSpace(str))
		}
		return out, nil
	}

	// source and kernel
	v := get("source")
	var files []string
	var err error
	switch {
	case v != nil:
		if files, err = strs("opencl.source", v); err != nil {
			return nil, err
		}
		var src strings.Builder
		k.Sources, sec.sums = nil, nil
		for i, f := range files {
			path := f
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(s.Source), path)
			}
			path = filepath.Clean(path)
			data, err := os.ReadFile(path)
			if err != nil {
				field := "opencl.source"
				if v.kind == nList {
					field = fmt.Sprintf("opencl.source[%d]", i)
				}
				return nil, d.errf(field, v, "%q: %v", f, pathErr(err))
			}
			k.Sources = append(k.Sources, path)
			sum := sha256.Sum256(data)
			sec.sums = append(sec.sums, hex.EncodeToString(sum[:]))
			src.Write(data)
			src.WriteByte('\n')
		}
		srcText = src.String()
	case base == nil:
		return nil, missing("source", "the kernel's source file (or a list of them)")
	default:
		for _, f := range k.Sources {
			files = append(files, filepath.Base(f))
		}
	}
	if v = get("kernel"); v != nil {
		if k.Kernel, err = d.str("opencl.kernel", v); err != nil {
			return nil, err
		}
	} else if base == nil {
		return nil, missing("kernel", "the name of the __kernel function to tune")
	}
	if srcText != "" && !opencl.DefinesKernel(srcText, k.Kernel) {
		return nil, d.errf("opencl.kernel", v, "%q: no __kernel of that name in %s", k.Kernel, strings.Join(files, ", "))
	}
	if v = get("options"); v != nil {
		if k.Options, err = strs("opencl.options", v); err != nil {
			return nil, err
		}
	}

	// tune_params: an ordered mapping, each a list of values or one value
	if v = get("tune_params"); v != nil {
		if err := s.decodeTuneParams(d, sec, v); err != nil {
			return nil, err
		}
	} else if base == nil {
		return nil, missing("tune_params", "the tunable parameters, each with its values")
	}

	if v = get("block_size_names"); v != nil {
		if k.BlockSizeNames, err = strs("opencl.block_size_names", v); err != nil {
			return nil, err
		}
	}
	if v = get("problem_size"); v != nil {
		if k.ProblemSize, err = strs("opencl.problem_size", v); err != nil {
			return nil, err
		}
	} else if base == nil {
		return nil, missing("problem_size", "the launch's problem in x (, y, z), e.g. [n, n]")
	}
	for i, axis := range []string{"x", "y", "z"} {
		if v = get("grid_div_" + axis); v != nil {
			if k.GridDiv[i], err = strs("opencl.grid_div_"+axis, v); err != nil {
				return nil, err
			}
			if k.GridDiv[i] == nil {
				k.GridDiv[i] = []string{}
			}
		}
	}
	if v = get("args"); v != nil {
		if k.Args, err = decodeArgs(d, s, sec, v); err != nil {
			return nil, err
		}
	} else if base == nil {
		return nil, missing("args", "the kernel's arguments in order")
	}
	if v = get("check"); v != nil {
		if err := decodeCheck(d, s, sec, v); err != nil {
			return nil, err
		}
	}
	if v = get("device"); v != nil {
		if err := decodeDevice(d, sec, v); err != nil {
			return nil, err
		}
	}
	if v = get("compile_ahead"); v != nil {
		if k.CompileAhead, err = d.str("opencl.compile_ahead", v); err != nil {
			return nil, err
		}
	}
	if v = get("iterations"); v != nil {
		n, err := d.integer("opencl.iterations", v)
		if err != nil {
			return nil, err
		}
		if n < 1 || n > 1000 {
			return nil, d.errf("opencl.iterations", v, "%d: want 1 to 1000 timed runs a measurement", n)
		}
		k.Iterations = int(n)
	}
	if base != nil {
		if errs := base.problemsLeft(given); len(errs) > 0 {
			return nil, errs[0]
		}
	}
	if _, err := k.Compile(); err != nil {
		var fe *opencl.FieldError
		if errors.As(err, &fe) {
			return nil, &FieldError{File: d.file, Field: "opencl." + fe.Field, Line: sec.line(fe.Field), Err: fe.Err}
		}
		return nil, d.wrap("opencl", n, err)
	}
	if decls, ok := opencl.KernelParams(srcText, k.Kernel); ok {
		if err := opencl.CheckArgs(k.Args, decls, k.Kernel); err != nil {
			var fe *opencl.FieldError
			errors.As(err, &fe)
			return nil, &FieldError{File: d.file, Field: "opencl." + fe.Field, Line: sec.line(fe.Field), Err: fe.Err}
		}
	}
	if err := sec.hashData(d); err != nil {
		return nil, err
	}
	return sec, nil
}

// decodeTuneParams reads opencl.tune_params.
func (s *Spec) decodeTuneParams(d decoder, sec *openclSection, v *node) error {
	tp, err := d.mapping("opencl.tune_params", v)
	if err != nil {
		return err
	}
	if len(tp.keys) == 0 {
		return d.errf("opencl.tune_params", tp, "no parameters")
	}
	sec.params, sec.k.Params = nil, nil
	for i, name := range tp.keys {
		f := "opencl.tune_params." + name
		if !genome.IsName(name) {
			return d.errf(f, tp.vals[i], "%q is not a name usable as a define ([A-Za-z_][A-Za-z0-9_]*)", name)
		}
		if slices.Contains(s.ProblemDims, name) {
			return d.errf(f, tp.vals[i], "%q is also a problem dim (problem_dims)", name)
		}
		items := []*node{tp.vals[i]}
		if tp.vals[i].kind == nList {
			items = tp.vals[i].items
		}
		if len(items) == 0 {
			return d.errf(f, tp.vals[i], "no values")
		}
		gp := genome.Param{Name: name}
		p := opencl.Param{Name: name}
		for j, it := range items {
			val, err := d.value(f, it)
			if err != nil {
				return err
			}
			if j == 0 {
				gp.Kind = val.Kind
			}
			if slices.ContainsFunc(gp.Values, func(w genome.Value) bool { return w.Kind == val.Kind && w.Equal(val) }) {
				return d.errf(f, it, "value %s listed twice", literal(val))
			}
			gp.Values = append(gp.Values, val)
			p.Values = append(p.Values, val.Native())
		}
		sec.lines["tune_params."+name] = tp.vals[i].line
		sec.params = append(sec.params, gp)
		sec.k.Params = append(sec.k.Params, p)
	}
	return nil
}

// line is the line of field, or of the nearest enclosing field known.
func (sec *openclSection) line(field string) int {
	for f := field; f != ""; {
		if l, ok := sec.lines[f]; ok {
			return l
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return 0
}

// pathErr drops the path an *os.PathError repeats.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func decodeArgs(d decoder, s *Spec, sec *openclSection, n *node) ([]opencl.Arg, error) {
	items, err := d.list("opencl.args", n)
	if err != nil {
		return nil, err
	}
	var out []opencl.Arg
	for i, it := range items {
		f := fmt.Sprintf("opencl.args[%d]", i)
		m, err := d.mapping(f, it)
		if err != nil {
			return nil, err
		}
		if err := d.knownKeys(f, m, []string{"name", "type", "size", "value", "fill", "seed", "output", "data", "answer"}); err != nil {
			return nil, err
		}
		sec.lines[f[len("opencl."):]] = it.line
		var a opencl.Arg
		str := func(key string) (string, error) {
			v := m.get(key)
			if v.isNull() {
				return "", nil
			}
			sec.lines[fmt.Sprintf("args[%d].%s", i, key)] = v.line
			return d.str(f+"."+key, v)
		}
		if a.Name, err = str("name"); err != nil {
			return nil, err
		}
		if a.Type, err = str("type"); err != nil {
			return nil, err
		}
		if a.Type == "" {
			return nil, d.errf(f+".type", it, "missing (want one of %s)", strings.Join(opencl.TypeNames(), ", "))
		}
		if a.Size, err = str("size"); err != nil {
			return nil, err
		}
		if a.Value, err = str("value"); err != nil {
			return nil, err
		}
		if v := m.get("output"); !v.isNull() {
			if a.Output, err = d.boolean(f+".output", v); err != nil {
				return nil, err
			}
		}
		if v := m.get("fill"); !v.isNull() {
			sec.lines[fmt.Sprintf("args[%d].fill", i)] = v.line
			if a.Fill, err = decodeFill(d, f+".fill", v); err != nil {
				return nil, err
			}
		}
		for _, key := range []string{"data", "answer"} {
			v := m.get(key)
			if v.isNull() {
				continue
			}
			path, err := npyFile(d, s, sec, f+"."+key, v, a.Type)
			if err != nil {
				return nil, err
			}
			if key == "data" {
				a.Data = path
			} else {
				a.Answer = path
			}
		}
		if v := m.get("seed"); !v.isNull() {
			seed, err := d.integer(f+".seed", v)
			if err != nil {
				return nil, err
			}
			if seed < 0 {
				return nil, d.errf(f+".seed", v, "%d is negative", seed)
			}
			a.Fill.Seed = uint64(seed)
		}
		out = append(out, a)
	}
	return out, nil
}

// npyFile reads an argument's .npy file (relative to the spec's folder):
// its dtype must be the argument's type. Its hash joins the sources'.
func npyFile(d decoder, s *Spec, sec *openclSection, f string, v *node, typ string) (string, error) {
	name, err := d.str(f, v)
	if err != nil {
		return "", err
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(s.Source), path)
	}
	path = filepath.Clean(path)
	typ2, _, err := opencl.HeadNPY(path)
	if err != nil {
		return "", d.errf(f, v, "%q: %v", name, pathErr(err))
	}
	if t, ok := opencl.Types[typ]; ok && opencl.Types[typ2] != t {
		return "", d.errf(f, v, "%q holds %s elements, the argument is %s", name, typ2, typ)
	}
	sec.npy = append(sec.npy, npyHash{at: len(sec.sums), path: path, name: name, field: f, node: v})
	sec.sums = append(sec.sums, "") // hashData's
	return path, nil
}

// npyHash is an argument's .npy file whose hash is owed to sums[at].
type npyHash struct {
	at                int
	path, name, field string
	node              *node
}

// hashData hashes the section's .npy files, each on a goroutine of its
// own: hundreds of MB each, read before a tuning run's worker starts.
func (sec *openclSection) hashData(d decoder) error {
	errs := make([]error, len(sec.npy))
	var wg sync.WaitGroup
	for i, h := range sec.npy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, sum, err := opencl.HashNPY(h.path)
			errs[i] = err
			sec.sums[h.at] = hex.EncodeToString(sum[:])
		}()
	}
	wg.Wait()
	for i, h := range sec.npy {
		if errs[i] != nil {
			return d.errf(h.field, h.node, "%q: %v", h.name, pathErr(errs[i]))
		}
	}
	sec.npy = nil
	return nil
}

// decodeFill reads zero | random | {random: scale} | {constant: v} |
// {ramp: [start, step]}.
func decodeFill(d decoder, f string, n *node) (opencl.Fill, error) {
	if n.kind == nScalar {
		s, err := d.str(f, n)
		if err != nil {
			return opencl.Fill{}, err
		}
		switch s {
		case opencl.FillZero, opencl.FillRandom:
			return opencl.Fill{Kind: s}, nil
		}
		return opencl.Fill{}, d.errf(f, n, "%q: want zero, random, {random: scale}, {constant: value}, {ramp: [start, step]}, {uniform: [low, high]} or {normal: [mean, std]}", s)
	}
	m, err := d.mapping(f, n)
	if err != nil {
		return opencl.Fill{}, err
	}
	if len(m.keys) != 1 {
		return opencl.Fill{}, d.errf(f, n, "want one of random, constant, ramp, uniform or normal, got %d keys", len(m.keys))
	}
	v := m.vals[0]
	switch key := m.keys[0]; key {
	case opencl.FillRandom, opencl.FillConstant:
		x, err := d.number(f+"."+key, v)
		if err != nil {
			return opencl.Fill{}, err
		}
		return opencl.Fill{Kind: key, Value: x}, nil
	case opencl.FillRamp, opencl.FillUniform, opencl.FillNormal:
		items, err := d.list(f+"."+key, v)
		if err != nil {
			return opencl.Fill{}, err
		}
		want := map[string]string{opencl.FillRamp: "[start, step]", opencl.FillUniform: "[low, high]", opencl.FillNormal: "[mean, std]"}[key]
		if len(items) != 2 {
			return opencl.Fill{}, d.errf(f+"."+key, v, "want %s, got %d numbers", want, len(items))
		}
		a, err := d.number(f+"."+key+"[0]", items[0])
		if err != nil {
			return opencl.Fill{}, err
		}
		b, err := d.number(f+"."+key+"[1]", items[1])
		if err != nil {
			return opencl.Fill{}, err
		}
		if key != opencl.FillRamp && (b < 0 || (key == opencl.FillUniform && b < a)) {
			return opencl.Fill{}, d.errf(f+"."+key, v, "want %s, got [%s, %s]", want, genome.PyFloat(a), genome.PyFloat(b))
		}
		return opencl.Fill{Kind: key, Start: a, Step: b}, nil
	default:
		return opencl.Fill{}, d.errf(f, v, "%q: want random, constant, ramp, uniform or normal", key)
	}
}

func decodeCheck(d decoder, s *Spec, sec *openclSection, n *node) error {
	m, err := d.mapping("opencl.check", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("opencl.check", m, []string{"reference", "reference_source", "reference_kernel", "tolerance", "compare", "verify"}); err != nil {
		return err
	}
	c := &sec.k.Check
	if v := m.get("reference"); !v.isNull() {
		ref, err := d.mapping("opencl.check.reference", v)
		if err != nil {
			return err
		}
		c.Reference = map[string]any{}
		for i, name := range ref.keys {
			f := "opencl.check.reference." + name
			j := slices.IndexFunc(sec.params, func(p genome.Param) bool { return p.Name == name })
			if j < 0 {
				return d.errf(f, ref.vals[i], "%q is not a tunable parameter", name)
			}
			val, err := d.value(f, ref.vals[i])
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(sec.params[j].Values, func(w genome.Value) bool { return sameValue(w, val) }) {
				return d.errf(f, ref.vals[i], "%s is not among its values %s", literal(val), valueList(sec.params[j].Values))
			}
			c.Reference[name] = val.Native()
		}
	}
	if v := m.get("reference_source"); !v.isNull() {
		files, err := d.str("opencl.check.reference_source", v)
		if err != nil {
			return err
		}
		path := files
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(s.Source), path)
		}
		data, err := os.ReadFile(filepath.Clean(path))
		if err != nil {
			return d.errf("opencl.check.reference_source", v, "%q: %v", files, pathErr(err))
		}
		sum := sha256.Sum256(data)
		sec.sums = append(sec.sums, hex.EncodeToString(sum[:]))
		c.ReferenceSources = []string{filepath.Clean(path)}
		kv := m.get("reference_kernel")
		if kv.isNull() {
			return d.errf("opencl.check.reference_kernel", n, "missing: the reference source's kernel")
		}
		if c.ReferenceKernel, err = d.str("opencl.check.reference_kernel", kv); err != nil {
			return err
		}
		if !opencl.DefinesKernel(string(data), c.ReferenceKernel) {
			return d.errf("opencl.check.reference_kernel", kv, "%q: no __kernel of that name in %s", c.ReferenceKernel, files)
		}
	} else if v := m.get("reference_kernel"); !v.isNull() {
		return d.errf("opencl.check.reference_kernel", v, "needs reference_source")
	}
	if v := m.get("verify"); !v.isNull() {
		if c.Verify, err = d.str("opencl.check.verify", v); err != nil {
			return err
		}
	}
	if v := m.get("compare"); !v.isNull() {
		how, err := d.str("opencl.check.compare", v)
		if err != nil {
			return err
		}
		switch how {
		case "elements":
		case "sum":
			c.Sum = true
		case "allclose":
			c.AllClose = true
		default:
			return d.errf("opencl.check.compare", v, "%q: want elements, sum or allclose", how)
		}
	}
	if v := m.get("tolerance"); !v.isNull() && c.AllClose {
		// numpy.allclose's rule takes both: atol as abs, rtol as rel.
		tm, err := d.mapping("opencl.check.tolerance", v)
		if err != nil {
			return err
		}
		if err := d.knownKeys("opencl.check.tolerance", tm, []string{"abs", "rel"}); err != nil {
			return err
		}
		for key, dst := range map[string]*float64{"abs": &c.Abs, "rel": &c.Rel} {
			if x := tm.get(key); !x.isNull() {
				if *dst, err = d.number("opencl.check.tolerance."+key, x); err != nil {
					return err
				}
			}
		}
	} else if !v.isNull() {
		b, err := decodeBudget(d, "opencl.check.tolerance", v)
		if err != nil {
			return err
		}
		if b.ULP > 0 {
			return d.errf("opencl.check.tolerance.ulp", v, "an output check takes abs or rel")
		}
		c.Abs, c.Rel = b.Abs, b.Rel
	}
	return nil
}

// sameValue compares values as numbers when both are.
func sameValue(a, b genome.Value) bool {
	x, okx := a.Float64()
	y, oky := b.Float64()
	if okx && oky {
		return x == y
	}
	return a.Kind == b.Kind && a.Equal(b)
}

func decodeDevice(d decoder, sec *openclSection, n *node) error {
	m, err := d.mapping("opencl.device", n)
	if err != nil {
		return err
	}
	if err := d.knownKeys("opencl.device", m, []string{"platform", "device", "index"}); err != nil {
		return err
	}
	sel := &sec.k.Device
	if v := m.get("platform"); !v.isNull() {
		if sel.Platform, err = d.str("opencl.device.platform", v); err != nil {
			return err
		}
	}
	if v := m.get("device"); !v.isNull() {
		if sel.Device, err = d.str("opencl.device.device", v); err != nil {
			return err
		}
	}
	if v := m.get("index"); !v.isNull() {
		i, err := d.integer("opencl.device.index", v)
		if err != nil {
			return err
		}
		if i < 0 || i > 1<<16 {
			return d.errf("opencl.device.index", v, "%d out of range", i)
		}
		sel.Index = int(i)
	}
	return nil
}
