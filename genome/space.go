package genome

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// Param is one tunable parameter with its values in order. The order matters:
// search moves treat neighbouring values as close.
type Param struct {
	Name    string
	Kind    Kind
	Values  []Value
	Default int // index into Values
}

// Config assigns one value to each parameter of a space, as indices into each
// parameter's Values.
type Config []int

// Clone returns a copy of c.
func (c Config) Clone() Config { return slices.Clone(c) }

// Equal reports whether c and d are the same config.
func (c Config) Equal(d Config) bool { return slices.Equal(c, d) }

// Space is a set of parameters, problem-size variables and the constraints
// over them. A Space is immutable after NewSpace and safe for concurrent use.
type Space struct {
	params []Param
	vars   []string // problem-size variable names, in slot order after the params
	consts []Value  // their values
	cons   []constraint
	byName map[string]int
	byStr  []map[string]int // per param: Python str of a value -> index
	domain map[string]struct{}

	enumOnce sync.Once
	all      []Config
	tr       treeOnce
}

type constraint struct {
	src  string
	expr *Expr
	last int // highest param index the constraint reads; -1 for none
}

// SpaceOptions holds what a space may carry besides its parameters.
type SpaceOptions struct {
	// Constraints are expressions that every valid config satisfies.
	Constraints []string
	// Vars are problem-size variables constraints may name.
	Vars map[string]Value
	// Domain, when set, restricts the space to these canonical keys: a recorded
	// space is exactly the configs that were measured.
	Domain []string
}

// NewSpace checks params and compiles the constraints once.
func NewSpace(params []Param, opt SpaceOptions) (*Space, error) {
	if len(params) == 0 {
		return nil, errors.New("space has no parameters")
	}
	s := &Space{
		params: make([]Param, len(params)),
		byName: make(map[string]int, len(params)+len(opt.Vars)),
		byStr:  make([]map[string]int, len(params)),
	}
	for i, p := range params {
		if !IsName(p.Name) {
			return nil, fmt.Errorf("parameter %d: invalid name %q", i, p.Name)
		}
		if _, dup := s.byName[p.Name]; dup {
			return nil, fmt.Errorf("parameter %q: defined twice", p.Name)
		}
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("parameter %q: no values", p.Name)
		}
		if p.Default < 0 || p.Default >= len(p.Values) {
			return nil, fmt.Errorf("parameter %q: default index %d out of range", p.Name, p.Default)
		}
		if p.Kind == 0 {
			p.Kind = p.Values[0].Kind
		}
		m := make(map[string]int, len(p.Values))
		for j, v := range p.Values {
			if v.Kind != p.Kind && !(p.Kind == KindFloat && v.Kind == KindInt) {
				return nil, fmt.Errorf("parameter %q: value %d (%s) is %s, want %s", p.Name, j, v, v.Kind, p.Kind)
			}
			if p.Kind == KindFloat && v.Kind == KindInt {
				v = Float(float64(v.I))
			}
			str := v.String()
			if strings.Contains(str, ",") {
				return nil, fmt.Errorf("parameter %q: value %q contains a comma, which cache keys cannot hold", p.Name, str)
			}
			if _, dup := m[str]; dup {
				return nil, fmt.Errorf("parameter %q: value %s listed twice", p.Name, str)
			}
			m[str] = j
		}
		p.Values = slices.Clone(p.Values)
		for j := range p.Values {
			if p.Kind == KindFloat && p.Values[j].Kind == KindInt {
				p.Values[j] = Float(float64(p.Values[j].I))
			}
		}
		s.params[i] = p
		s.byName[p.Name] = i
		s.byStr[i] = m
	}
	vars := make([]string, 0, len(opt.Vars))
	for name := range opt.Vars {
		vars = append(vars, name)
	}
	slices.Sort(vars)
	for _, name := range vars {
		if !IsName(name) {
			return nil, fmt.Errorf("variable %q: invalid name", name)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("variable %q: clashes with a parameter", name)
		}
		s.byName[name] = len(s.params) + len(s.vars)
		s.vars = append(s.vars, name)
		s.consts = append(s.consts, opt.Vars[name])
	}
	resolve := func(name string) (int, bool) {
		i, ok := s.byName[name]
		return i, ok
	}
	for i, src := range opt.Constraints {
		e, err := Compile(src, resolve)
		if err != nil {
			return nil, fmt.Errorf("constraint %d: %w", i, err)
		}
		last := -1
		for _, slot := range e.Slots() {
			if slot < len(s.params) && slot > last {
				last = slot
			}
		}
		s.cons = append(s.cons, constraint{src: src, expr: e, last: last})
	}
	if opt.Domain != nil {
		s.domain = make(map[string]struct{}, len(opt.Domain))
		for _, k := range opt.Domain {
			if _, err := s.ParseKey(k); err != nil {
				return nil, fmt.Errorf("domain: %w", err)
			}
			s.domain[k] = struct{}{}
		}
	}
	return s, nil
}

// IsName reports whether s can name a parameter or variable in a constraint
// expression: an identifier that is not a Python keyword.
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	switch s {
	case "and", "or", "not", "True", "False", "for", "in", "if", "None":
		return false
	}
	return true
}

// Params returns the parameters. The caller must not modify them.
func (s *Space) Params() []Param { return s.params }

// Len is the number of parameters.
func (s *Space) Len() int { return len(s.params) }

// Param returns the index of the named parameter.
func (s *Space) Param(name string) (int, bool) {
	i, ok := s.byName[name]
	return i, ok && i < len(s.params)
}

// Constraints returns the constraint sources in order.
func (s *Space) Constraints() []string {
	out := make([]string, len(s.cons))
	for i, c := range s.cons {
		out[i] = c.src
	}
	return out
}

// RawSize is the number of combinations before constraints, or +Inf past float range.
func (s *Space) RawSize() float64 {
	n := 1.0
	for _, p := range s.params {
		n *= float64(len(p.Values))
	}
	return n
}

// Default returns the config of each parameter's default value.
func (s *Space) Default() Config {
	c := make(Config, len(s.params))
	for i, p := range s.params {
		c[i] = p.Default
	}
	return c
}

// Values returns the values of c.
func (s *Space) Values(c Config) []Value {
	out := make([]Value, len(c))
	for i, j := range c {
		out[i] = s.params[i].Values[j]
	}
	return out
}

// Map returns c as a name -> value map.
func (s *Space) Map(c Config) map[string]Value {
	m := make(map[string]Value, len(c))
	for i, j := range c {
		m[s.params[i].Name] = s.params[i].Values[j]
	}
	return m
}

// Key is the canonical key of c: the values joined by commas in parameter
// order, as Kernel Tuner writes cache keys.
func (s *Space) Key(c Config) string {
	var b strings.Builder
	for i, j := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s.params[i].Values[j].String())
	}
	return b.String()
}

// Hash is a stable 16-hex-digit hash of c's canonical key.
func (s *Space) Hash(c Config) string { return KeyHash(s.Key(c)) }

// KeyHash is the stable hash of a canonical key: the first 8 bytes of its SHA-256.
func KeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:8])
}

// ParseKey is the inverse of Key. It checks that each value is one of the
// parameter's values, not that the config satisfies the constraints.
func (s *Space) ParseKey(key string) (Config, error) {
	parts := strings.Split(key, ",")
	if len(parts) != len(s.params) {
		return nil, fmt.Errorf("config key %q: %d values, want %d", key, len(parts), len(s.params))
	}
	c := make(Config, len(parts))
	for i, p := range parts {
		j, ok := s.byStr[i][strings.TrimSpace(p)]
		if !ok {
			return nil, fmt.Errorf("config key %q: %q is not a value of parameter %q", key, p, s.params[i].Name)
		}
		c[i] = j
	}
	return c, nil
}

// InRange reports whether c has the right length and every index is in range.
func (s *Space) InRange(c Config) bool {
	if len(c) != len(s.params) {
		return false
	}
	for i, j := range c {
		if j < 0 || j >= len(s.params[i].Values) {
			return false
		}
	}
	return true
}

func (s *Space) env(c Config) []Value {
	env := make([]Value, len(s.params)+len(s.consts))
	for i, j := range c {
		env[i] = s.params[i].Values[j]
	}
	copy(env[len(s.params):], s.consts)
	return env
}

// Valid reports whether c is in range, in the domain if the space has one,
// and satisfies every constraint. A constraint that fails to evaluate
// (division by zero, say) makes the config invalid, as Kernel Tuner treats it.
func (s *Space) Valid(c Config) bool {
	if !s.InRange(c) {
		return false
	}
	if s.domain != nil {
		if _, ok := s.domain[s.Key(c)]; !ok {
			return false
		}
	}
	env := s.env(c)
	for _, k := range s.cons {
		if ok, err := k.expr.Truth(env); err != nil || !ok {
			return false
		}
	}
	return true
}

// Check is Valid with a reason: the first constraint c violates, or why it is out of the space.
func (s *Space) Check(c Config) error {
	if !s.InRange(c) {
		return fmt.Errorf("config %v: not in the space of %d parameters", []int(c), len(s.params))
	}
	if s.domain != nil {
		if _, ok := s.domain[s.Key(c)]; !ok {
			return fmt.Errorf("config %q: not in the recorded domain", s.Key(c))
		}
	}
	env := s.env(c)
	for i, k := range s.cons {
		ok, err := k.expr.Truth(env)
		if err != nil {
			return fmt.Errorf("config %q: constraint %d %q: %w", s.Key(c), i, k.src, err)
		}
		if !ok {
			return fmt.Errorf("config %q: violates constraint %d %q", s.Key(c), i, k.src)
		}
	}
	return nil
}

// All returns every valid config in lexicographic index order. It is computed
// once and shared: the caller must not modify it. It holds every valid
// config in memory: on a space that is not Enumerable use Count, Sample and
// Nearest instead.
func (s *Space) All() []Config {
	s.enumOnce.Do(func() { s.all = s.enumerate() })
	return s.all
}

// Size is the number of valid configs: counted without listing them where
// the space can be counted (see Count), else the length of All.
func (s *Space) Size() int {
	if s.domain == nil {
		if n, ok := s.Count(); ok && n <= math.MaxInt {
			return int(n)
		}
	}
	return len(s.All())
}

func (s *Space) enumerate() []Config {
	if s.domain != nil {
		out := make([]Config, 0, len(s.domain))
		for k := range s.domain {
			c, _ := s.ParseKey(k)
			if s.Valid(c) {
				out = append(out, c)
			}
		}
		slices.SortFunc(out, func(a, b Config) int { return slices.Compare(a, b) })
		return out
	}
	// Depth-first, checking each constraint as soon as the last parameter it
	// reads is bound, so invalid prefixes are cut early.
	byLast, always := s.constraintsByLast()
	env := s.env(s.Default())
	for _, e := range always {
		if ok, err := e.Truth(env); err != nil || !ok {
			return nil
		}
	}
	var out []Config
	cur := make(Config, len(s.params))
	var walk func(d int)
	walk = func(d int) {
		if d == len(s.params) {
			out = append(out, cur.Clone())
			return
		}
	next:
		for j, v := range s.params[d].Values {
			cur[d] = j
			env[d] = v
			for _, e := range byLast[d] {
				if ok, err := e.Truth(env); err != nil || !ok {
					continue next
				}
			}
			walk(d + 1)
		}
	}
	walk(0)
	return out
}

// ErrEmptySpace is returned when a space has no valid config.
var ErrEmptySpace = errors.New("space has no valid config")

// Sample returns a valid config drawn uniformly at random: from All on a
// listed space (Enumerable), else through the counted tree, exactly
// uniform too, without listing (see Count; a space that cannot be counted
// is sampled by rejection, uniform unless it gives up, see sampleLarge).
func (s *Space) Sample(rng *rand.Rand) (Config, error) {
	if !s.Enumerable() {
		return s.sampleLarge(rng)
	}
	all := s.All()
	if len(all) == 0 {
		return nil, ErrEmptySpace
	}
	return all[rng.IntN(len(all))].Clone(), nil
}

// Neighbours returns the valid configs that differ from c in one parameter
// moved to an adjacent value, in parameter order, lower value first.
func (s *Space) Neighbours(c Config) []Config {
	var out []Config
	for i := range c {
		for _, d := range [2]int{-1, 1} {
			j := c[i] + d
			if j < 0 || j >= len(s.params[i].Values) {
				continue
			}
			n := c.Clone()
			n[i] = j
			if s.Valid(n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// Distance is the distance between two configs on normalised value indices:
// the sum over parameters of |a_i - b_i| / (len(values_i) - 1).
func (s *Space) Distance(a, b Config) float64 {
	d := 0.0
	for i := range a {
		n := len(s.params[i].Values) - 1
		if n == 0 || a[i] == b[i] {
			continue
		}
		d += math.Abs(float64(a[i]-b[i])) / float64(n)
	}
	return d
}

// Repair returns c if it is valid, else the nearest valid config by Distance,
// ties broken at random. It returns ErrEmptySpace when there is none. On a
// space that is not Enumerable it is Nearest's bounded search.
func (s *Space) Repair(rng *rand.Rand, c Config) (Config, error) {
	if s.Valid(c) {
		return c, nil
	}
	if !s.Enumerable() {
		return s.repairLarge(rng, c)
	}
	all := s.All()
	if len(all) == 0 {
		return nil, ErrEmptySpace
	}
	best, ties := -1, 0
	bestD := math.Inf(1)
	for i, v := range all {
		d := s.Distance(c, v)
		switch {
		case d < bestD:
			best, bestD, ties = i, d, 1
		case d == bestD:
			ties++
			if rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return all[best].Clone(), nil
}

// repairSamples is how many uniform samples repairLarge weighs when the
// bounded search finds nothing.
const repairSamples = 64

// repairLarge is Repair on a space that is not listed: Nearest's bounded
// search, and where that finds nothing within its budget (a space that
// cannot be counted, whose invalid subtrees are only found by walking
// them), the nearest of repairSamples uniform samples.
func (s *Space) repairLarge(rng *rand.Rand, c Config) (Config, error) {
	if r, ok := s.Nearest(rng, s.DistanceCost(c), nil); ok {
		return r, nil
	}
	var best Config
	bestD := math.Inf(1)
	for range repairSamples {
		v, err := s.sampleLarge(rng)
		if err != nil {
			return nil, err
		}
		if d := s.Distance(c, v); d < bestD {
			best, bestD = v, d
		}
	}
	return best, nil
}

// DistanceCost is Distance from c as a per-parameter cost for Nearest.
func (s *Space) DistanceCost(c Config) func(i, j int) float64 {
	return func(i, j int) float64 {
		n := len(s.params[i].Values) - 1
		if n == 0 || c[i] == j {
			return 0
		}
		return math.Abs(float64(c[i]-j)) / float64(n)
	}
}

// Mutate changes each parameter of c with probability rate (at least one
// parameter always changes) to a value drawn around its current index, then
// repairs the result. Scale is the standard deviation of the index step as a
// fraction of the parameter's value count.
func (s *Space) Mutate(rng *rand.Rand, c Config, rate, scale float64) (Config, error) {
	m := c.Clone()
	mutable := make([]int, 0, len(c))
	for i, p := range s.params {
		if len(p.Values) > 1 {
			mutable = append(mutable, i)
		}
	}
	if len(mutable) == 0 {
		return s.Repair(rng, m)
	}
	forced := mutable[rng.IntN(len(mutable))]
	for _, i := range mutable {
		if i != forced && rng.Float64() >= rate {
			continue
		}
		m[i] = StepIndex(rng, m[i], len(s.params[i].Values), scale)
	}
	return s.Repair(rng, m)
}

// StepIndex moves index j of n values by a non-zero Gaussian step of standard
// deviation scale*n (at least one index), reflecting at the ends.
func StepIndex(rng *rand.Rand, j, n int, scale float64) int {
	if n < 2 {
		return j
	}
	sd := math.Max(scale*float64(n), 0.5)
	step := int(math.Round(rng.NormFloat64() * sd))
	if step == 0 {
		if rng.IntN(2) == 0 {
			step = -1
		} else {
			step = 1
		}
	}
	k := j + step
	period := 2 * (n - 1)
	k = ((k % period) + period) % period
	if k >= n {
		k = period - k
	}
	if k == j { // a reflection can land back home
		if j+1 < n {
			k = j + 1
		} else {
			k = j - 1
		}
	}
	return k
}

// Crossover takes each parameter from a or b with equal chance and repairs the child.
func (s *Space) Crossover(rng *rand.Rand, a, b Config) (Config, error) {
	child := make(Config, len(a))
	for i := range a {
		if rng.IntN(2) == 0 {
			child[i] = a[i]
		} else {
			child[i] = b[i]
		}
	}
	return s.Repair(rng, child)
}

// Restrict returns a space with the same parameters, variables and domain
// as s and extra constraints on top of its own; vars adds or overrides
// variables. It is how a kernel spec narrows an evaluator's space.
func (s *Space) Restrict(constraints []string, vars map[string]Value) (*Space, error) {
	opt := SpaceOptions{Constraints: append(s.Constraints(), constraints...), Vars: map[string]Value{}}
	for i, name := range s.vars {
		opt.Vars[name] = s.consts[i]
	}
	for name, v := range vars {
		opt.Vars[name] = v
	}
	if s.domain != nil {
		opt.Domain = make([]string, 0, len(s.domain))
		for k := range s.domain {
			opt.Domain = append(opt.Domain, k)
		}
		slices.Sort(opt.Domain)
	}
	return NewSpace(s.params, opt)
}

// Vars returns the space's problem-size variables.
func (s *Space) Vars() map[string]Value {
	m := make(map[string]Value, len(s.vars))
	for i, name := range s.vars {
		m[name] = s.consts[i]
	}
	return m
}

// Native returns v as a plain Go value: int64, float64, bool or string.
func (v Value) Native() any {
	switch v.Kind {
	case KindInt:
		return v.I
	case KindFloat:
		return v.F
	case KindBool:
		return v.I != 0
	}
	return v.S
}

// ConfigMap returns c as parameter name -> plain Go value, the form configs
// take on the wire and in certificates.
func (s *Space) ConfigMap(c Config) map[string]any {
	m := make(map[string]any, len(c))
	for i, j := range c {
		m[s.params[i].Name] = s.params[i].Values[j].Native()
	}
	return m
}

// WireConfigMap is ConfigMap for a JSON answer: a finite float value is a
// json.Number in Python's repr, so 2.0 stays 2.0 on the wire (and a float
// to the runtime that reads it) instead of becoming the integer 2.
func (s *Space) WireConfigMap(c Config) map[string]any {
	m := s.ConfigMap(c)
	for i, j := range c {
		if v := s.params[i].Values[j]; v.Kind == KindFloat && !math.IsInf(v.F, 0) && !math.IsNaN(v.F) {
			m[s.params[i].Name] = json.Number(v.String())
		}
	}
	return m
}

// Translate maps c, a config of from, to the config of s with the same
// value (by its Python str form) for each of s's parameters, found by name.
// It reports false when from lacks one of s's parameters or a value is not
// among s's values. Parameters only from has are dropped, so several
// configs of from may map to one of s. The result may violate s's
// constraints; check it with Valid.
func (s *Space) Translate(from *Space, c Config) (Config, bool) {
	out := make(Config, len(s.params))
	for i, p := range s.params {
		j, ok := from.byName[p.Name]
		if !ok || j >= len(c) || c[j] < 0 || c[j] >= len(from.params[j].Values) {
			return nil, false
		}
		k, ok := s.byStr[i][from.params[j].Values[c[j]].String()]
		if !ok {
			return nil, false
		}
		out[i] = k
	}
	return out, true
}
