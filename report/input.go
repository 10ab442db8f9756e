package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/quasim/quasim/api"
)

// Input is what a report draws: what quasimctl fetched over the API.
type Input struct {
	Title     string
	Source    string    // where the data came from, shown under the title
	Generated time.Time // when it was fetched
	Kernels   []Kernel
	// RefreshS, when positive, makes the page reload itself every so many
	// seconds (the daemon's live /ui/).
	RefreshS int
	// Ceilings are the CPU's roofs the daemon measured (api.CPU.Ceilings),
	// for the roofline; nil when not measured or not fetched.
	Ceilings *api.Ceilings
	// Device is the class the ceilings were measured on.
	Device string
	// Causal is the causal profile of each declared pipeline; Pipelines
	// lists them all (a profile may be missing: CausalErrors says why).
	Pipelines    []api.Pipeline
	Causal       []api.Causal
	CausalErrors map[string]string
	// MemPlans are memory plans of graphs the caller planned for the
	// report (quasimctl report --memgraph FILE); quasimd keeps none.
	MemPlans []MemPlan
}

// MemPlan is one graph's memory plan and where it was made.
type MemPlan struct {
	File  string
	Where string // "planned by quasimd" or "planned offline"
	Plan  api.MemPlan
}

// Kernel is one kernel's record: its listing, every stored trial (all
// pages), its cycles and its certificates.
type Kernel struct {
	Info   api.Kernel
	Params []string // api.Trials.Params: names of the values of a config key
	Trials []api.Trial
	Cycles []api.Cycle
	Certs  []Cert
}

// Cert is a certificate's listing with, where the caller decoded the signed
// body, its checks and latency.
type Cert struct {
	api.CertSummary
	Checks  []Check
	Latency *Latency
}

// Check is one verification check of a certificate, as signed.
type Check struct {
	Name       string
	Passed     bool
	NotChecked string // why it was not made; "" when it was
	Inputs     map[string]any
	Results    map[string]any
	Note       string
}

// Latency is a certificate's measured latency distribution.
type Latency struct {
	Samples  int
	MedianMS float64
	CILowMS  float64
	CIHighMS float64
}

// job is one (problem, device) of a kernel with what belongs to it.
type job struct {
	id      string
	kernel  string
	problem string
	device  string
	foreign bool
	served  *api.Config
	work    *api.Work // one run's flops and compulsory bytes, where known
	// running, next and held are the listing's: a cycle is running, when
	// the next is due, and why the last pooled split gave it nothing.
	running  bool
	next     *time.Time
	held     string
	schedule string // the kernel's cron schedule
	params   []string
	trials   []api.Trial // in the order stored: evaluation order
	cycles   []api.Cycle // by id
	certs    []Cert
}

type jobKey struct{ problem, device string }

// jobsOf splits a kernel's record into its jobs: the jobs the listing
// names, in its order, then any (problem, device) that only trials,
// cycles or certificates name.
func jobsOf(k Kernel) []*job {
	var jobs []*job
	byKey := map[jobKey]*job{}
	byID := map[string]*job{}
	get := func(problem, device, id string) *job {
		jk := jobKey{problem, device}
		if j := byKey[jk]; j != nil {
			return j
		}
		if id == "" {
			id = k.Info.Name + "/" + problem + "/" + device
		}
		j := &job{id: id, kernel: k.Info.Name, problem: problem, device: device, params: k.Params}
		byKey[jk] = j
		byID[id] = j
		jobs = append(jobs, j)
		return j
	}
	for _, aj := range k.Info.Jobs {
		j := get(aj.Problem, aj.Device, aj.ID)
		j.foreign = aj.Foreign
		j.served = aj.Served
		j.work = aj.Work
		j.running, j.next, j.held, j.schedule = aj.Running, aj.NextCycle, aj.Held, k.Info.Schedule
	}
	for _, t := range k.Trials {
		j := get(t.Problem, t.Device, "")
		j.trials = append(j.trials, t)
	}
	for _, c := range k.Cycles {
		j := byID[c.Job]
		if j == nil {
			j = get(c.Problem, c.Device, c.Job)
		}
		j.cycles = append(j.cycles, c)
	}
	for _, c := range k.Certs {
		j := get(c.Problem, c.Device, "")
		j.certs = append(j.certs, c)
	}
	for _, j := range jobs {
		// j.trials stay in the API's order, the order they were stored:
		// the order of evaluation across cycles (and of the file, for an
		// import). Their times would not do: a replayed or imported
		// trial carries the time it was recorded.
		slices.SortStableFunc(j.cycles, func(a, b api.Cycle) int { return cmp.Compare(a.ID, b.ID) })
		slices.SortStableFunc(j.certs, func(a, b Cert) int { return b.IssuedAt.Compare(a.IssuedAt) })
	}
	return jobs
}

// unmeasured reports whether j has nothing to draw: no trial, no cycle, no
// certificate and nothing served.
func (j *job) unmeasured() bool {
	return len(j.trials) == 0 && len(j.cycles) == 0 && len(j.certs) == 0 && j.served == nil
}

// idleReason says why an unmeasured job has nothing yet, from what the
// listing says of it.
func (j *job) idleReason() string {
	switch {
	case j.held != "":
		return j.held
	case j.running:
		return "its first cycle is running: nothing stored yet"
	case j.foreign:
		return "foreign: listed, not tuned here"
	case j.next != nil:
		s := ""
		if j.schedule != "" {
			s = fmt.Sprintf(" (schedule %q)", j.schedule)
		}
		return fmt.Sprintf("not due yet: its first cycle is due at %s%s; quasimctl tune %s starts one now", j.next.UTC().Format("2006-01-02 15:04"), s, j.kernel)
	}
	return fmt.Sprintf("no cycle has run and none is scheduled; quasimctl tune %s starts one", j.kernel)
}
