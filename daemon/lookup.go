package daemon

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// lookupIndex keeps in memory what a config lookup needs, so that a miss
// (nearest problem, or the default) costs about what an exact hit does
// however many jobs a kernel has:
//
//   - per job, its served record and the trials the answer names (the
//     served config's, its front's and the default's), read once through
//     the trials' key index (store.ServedViews) and kept until that job
//     changes;
//   - per published kernel, its jobs by device class and problem
//     dimensionality, sorted by the sum of their problem's log sizes,
//     which bounds the log distance from below: a nearest search walks
//     out from the query's place and stops once that bound passes the
//     best distance found;
//   - per kernel, the encoded answers by query.
//
// A change to a job (a cycle ended, drift, a revocation, an import) drops
// that job's entry and its kernel's answers, nothing else; a reload or a
// job added by a miss publishes a new kernel, whose index is rebuilt from
// the entries still held. Its zero value is ready to use.
type lookupIndex struct {
	mu      sync.Mutex
	ver     uint64 // bumped by every invalidate
	entries map[store.JobKey]*servedEntry
	kernels map[string]*kernelIndex // by kernel name
}

// maxAnswers bounds the answers cached per kernel; past it one cached
// answer is dropped for each new one.
const maxAnswers = 4096

// servedEntry is what the store holds for one job that a lookup needs,
// kept small: 100,000 jobs are held at once.
type servedEntry struct {
	Served    store.Served
	HasServed bool
	trials    []store.Trial // of the served config and its front, where stored
	defaultMS float64       // the default config's measured time; 0 if none ok
	err       error         // why the job's records could not be read
}

// notServed is the entry of every job that serves nothing; never changed.
var notServed = &servedEntry{}

// trial returns the stored trial of config key, if the entry holds it.
func (e *servedEntry) trial(key string) (store.Trial, bool) {
	for _, t := range e.trials {
		if t.Key == key {
			return t, true
		}
	}
	return store.Trial{}, false
}

// kernelIndex is a published kernel's jobs arranged for lookups.
type kernelIndex struct {
	k       *kernel
	ver     uint64 // lookupIndex.ver when any of its jobs last changed
	stale   bool   // a job changed: its served slices need a refresh
	devices map[string]map[int]*problemIndex
	// defaults is, by problem, the job whose default config a default
	// answer serves: the last of the kernel's jobs at that problem.
	defaults map[string]*job
	answers  map[string]sockapi.Answer
}

// problemIndex holds a kernel's jobs of one device class and one number of
// dimensions.
type problemIndex struct {
	exact map[string]*job // by problem string: the first job at it
	pts   []point         // sorted by sum, then order
	// served are the points of pts that serve a config, in their order;
	// replaced, never changed, under lookupIndex.mu.
	served []point
}

type point struct {
	j     *job
	logs  []float64 // log of each dimension (at least 1)
	sum   float64
	order int // index in the kernel's jobs: ties go to the first
}

// invalidate drops what the index holds of jobs and their kernels'
// cached answers.
func (x *lookupIndex) invalidate(jobs ...store.JobKey) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ver++
	for _, key := range jobs {
		delete(x.entries, key)
		if ki := x.kernels[key.Kernel]; ki != nil {
			ki.ver, ki.stale = x.ver, true
			ki.answers = nil
		}
	}
}

// retain drops what the index holds of jobs and kernels no longer loaded
// (a reload that changed or removed specs): entries are keyed by spec
// version, so nothing else would ever drop them.
func (x *lookupIndex) retain(jobs map[string]*job, kernels map[string]*kernel) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ver++
	for key := range x.entries {
		if _, ok := jobs[key.String()]; !ok {
			delete(x.entries, key)
		}
	}
	for name := range x.kernels {
		if _, ok := kernels[name]; !ok {
			delete(x.kernels, name)
		}
	}
}

// kernel returns k's index, building it when k is new, and bringing its
// served jobs up to date when some changed: the entries it lacks are read
// in one transaction.
func (x *lookupIndex) kernel(st *store.Store, k *kernel) (*kernelIndex, error) {
	x.mu.Lock()
	ki := x.kernels[k.spec.Name]
	if ki != nil && ki.k == k && !ki.stale {
		x.mu.Unlock()
		return ki, nil
	}
	x.mu.Unlock()
	if err := x.load(st, k.jobs); err != nil {
		return nil, err
	}
	if ki == nil || ki.k != k {
		ki = buildKernelIndex(k)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if cur := x.kernels[k.spec.Name]; cur != nil && cur.k == k && !cur.stale {
		return cur, nil // brought up to date meanwhile by another lookup
	} else if cur != nil && cur.k == k {
		ki = cur
	}
	for _, byDims := range ki.devices {
		for _, pi := range byDims {
			// A job whose entry is missing (it changed while the others
			// were read) stays a candidate; nearest reads it.
			served := make([]point, 0, len(pi.served))
			for _, p := range pi.pts {
				if e, ok := x.entries[p.j.key]; !ok || e.HasServed {
					served = append(served, p)
				}
			}
			pi.served = served
		}
	}
	ki.stale = false
	if x.kernels == nil {
		x.kernels = map[string]*kernelIndex{}
	}
	if x.kernels[k.spec.Name] != ki {
		ki.ver = x.ver
		x.kernels[k.spec.Name] = ki
	}
	return ki, nil
}

func buildKernelIndex(k *kernel) *kernelIndex {
	ki := &kernelIndex{k: k, devices: map[string]map[int]*problemIndex{}, defaults: map[string]*job{}}
	for i, j := range k.jobs {
		ki.defaults[j.key.Problem] = j
		dims, err := parseProblem(j.key.Problem)
		if err != nil {
			continue
		}
		byDims := ki.devices[j.key.Device]
		if byDims == nil {
			byDims = map[int]*problemIndex{}
			ki.devices[j.key.Device] = byDims
		}
		pi := byDims[len(dims)]
		if pi == nil {
			pi = &problemIndex{exact: map[string]*job{}}
			byDims[len(dims)] = pi
		}
		if _, ok := pi.exact[j.key.Problem]; !ok {
			pi.exact[j.key.Problem] = j
		}
		p := point{j: j, logs: make([]float64, len(dims)), order: i}
		for d, n := range dims {
			p.logs[d] = math.Log(float64(max(n, 1)))
			p.sum += p.logs[d]
		}
		pi.pts = append(pi.pts, p)
	}
	for _, byDims := range ki.devices {
		for _, pi := range byDims {
			slices.SortFunc(pi.pts, func(a, b point) int {
				if c := cmp.Compare(a.sum, b.sum); c != 0 {
					return c
				}
				return a.order - b.order
			})
		}
	}
	return ki
}

// load reads the entries of those of jobs the index does not hold, in one
// read transaction; a job whose records do not decode keeps its error in
// its entry, which its lookups then report.
func (x *lookupIndex) load(st *store.Store, jobs []*job) error {
	x.mu.Lock()
	ver := x.ver
	var missing []*job
	for _, j := range jobs {
		if _, ok := x.entries[j.key]; !ok {
			missing = append(missing, j)
		}
	}
	x.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	keys := make([]store.JobKey, len(missing))
	extra := make([][]string, len(missing))
	for i, j := range missing {
		keys[i] = j.key
		if d := defaultKey(j); d != "" {
			extra[i] = []string{d}
		}
	}
	views, err := st.ServedViews(keys, extra)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ver != ver {
		return nil // a job changed meanwhile: what was read may be older; read on use
	}
	if x.entries == nil {
		x.entries = make(map[store.JobKey]*servedEntry, len(missing))
	}
	for i, j := range missing {
		x.entries[j.key] = newServedEntry(j, views[i])
	}
	return nil
}

// entry returns j's entry, read from the store when the index lacks it.
func (x *lookupIndex) entry(st *store.Store, j *job) (*servedEntry, error) {
	x.mu.Lock()
	e, ok := x.entries[j.key]
	ver := x.ver
	x.mu.Unlock()
	if !ok {
		var d []string
		if k := defaultKey(j); k != "" {
			d = []string{k}
		}
		views, err := st.ServedViews([]store.JobKey{j.key}, [][]string{d})
		if err != nil {
			return nil, err
		}
		e = newServedEntry(j, views[0])
		x.mu.Lock()
		if x.ver == ver {
			if x.entries == nil {
				x.entries = map[store.JobKey]*servedEntry{}
			}
			x.entries[j.key] = e
		}
		x.mu.Unlock()
	}
	return e, e.err
}

func newServedEntry(j *job, v store.ServedView) *servedEntry {
	if v.Err == nil && !v.HasServed {
		return notServed
	}
	e := &servedEntry{Served: v.Served, HasServed: v.HasServed, err: v.Err}
	if t, ok := v.Trials[defaultKey(j)]; ok && t.Status == "ok" {
		e.defaultMS = t.TimeMS
	}
	keys := []string{v.Served.Key}
	for _, p := range v.Served.Front {
		keys = append(keys, p.Key)
	}
	for _, k := range keys {
		if t, ok := v.Trials[k]; ok {
			if _, dup := e.trial(k); !dup {
				e.trials = append(e.trials, t)
			}
		}
	}
	return e
}

// defaultKey is the key of the config j serves when nothing is tuned;
// empty when it has none.
func defaultKey(j *job) string {
	if j.spec.Default == nil || j.spec.Space == nil {
		return ""
	}
	return j.spec.Space.Key(j.spec.Default)
}

// cached returns the answer cached for query under ki, if any.
func (x *lookupIndex) cached(ki *kernelIndex, query string) (sockapi.Answer, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	a, ok := ki.answers[query]
	return a, ok
}

// hit returns the answer cached for query under k's index, when the index
// is k's and up to date: what cached returns after kernel, with one lock
// and no allocation, for the fast loop.
func (x *lookupIndex) hit(k *kernel, query []byte) (sockapi.Answer, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ki := x.kernels[k.spec.Name]
	if ki == nil || ki.k != k || ki.stale {
		return sockapi.Answer{}, false
	}
	a, ok := ki.answers[string(query)]
	return a, ok
}

// cache keeps a, computed from what the index held at version ver, unless
// one of ki's jobs changed since.
func (x *lookupIndex) cache(ki *kernelIndex, ver uint64, query string, a sockapi.Answer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ki.ver > ver {
		return
	}
	if ki.answers == nil {
		ki.answers = map[string]sockapi.Answer{}
	}
	if len(ki.answers) >= maxAnswers {
		for q := range ki.answers {
			delete(ki.answers, q)
			break
		}
	}
	ki.answers[query] = a
}

// version returns the index's change count, to pass to cache.
func (x *lookupIndex) version() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.ver
}

// nearest finds the served job of pi (as of the kernel's last refresh, see
// kernel) nearest to dims on the log scale
// (logDistance), skipping the jobs in skip: the first in the kernel's job
// order among those equally near. It reads the entries it lacks.
func (x *lookupIndex) nearest(st *store.Store, pi *problemIndex, dims []int, skip ...*job) (*job, *servedEntry, float64, error) {
	q := make([]float64, len(dims))
	qsum := 0.0
	for i, n := range dims {
		q[i] = math.Log(float64(max(n, 1)))
		qsum += q[i]
	}
	var (
		best      *job
		bestE     *servedEntry
		bestD     = math.Inf(1)
		bestOrder int
	)
	consider := func(p point) error {
		if slices.Contains(skip, p.j) {
			return nil
		}
		d := 0.0
		for i := range q {
			d += math.Abs(q[i] - p.logs[i])
		}
		if d > bestD || (d == bestD && p.order > bestOrder) {
			return nil
		}
		e, err := x.entry(st, p.j)
		if err != nil {
			return err
		}
		if e.HasServed {
			best, bestE, bestD, bestOrder = p.j, e, d, p.order
		}
		return nil
	}
	x.mu.Lock()
	pts := pi.served
	x.mu.Unlock()
	// |sum(q) - sum(p)| <= logDistance(q, p): walk out from qsum on both
	// sides, nearer side first, until the bound passes the best distance.
	hi := sort.Search(len(pts), func(i int) bool { return pts[i].sum >= qsum })
	lo := hi - 1
	const slack = 1e-9 // rounding of the sums
	for lo >= 0 || hi < len(pts) {
		var p point
		switch {
		case hi >= len(pts) || (lo >= 0 && qsum-pts[lo].sum <= pts[hi].sum-qsum):
			p = pts[lo]
			lo--
		default:
			p = pts[hi]
			hi++
		}
		if math.Abs(qsum-p.sum) > bestD+slack {
			break
		}
		if err := consider(p); err != nil {
			return nil, nil, 0, err
		}
	}
	return best, bestE, bestD, nil
}
