package daemon

import (
	"slices"

	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/internal/spec"
	"github.com/quasim/quasim/internal/store"
)

// storedJobs is the store's jobs by kernel name, read once per listing
// request for listed.
func (s *server) storedJobs() (map[string][]store.JobKey, error) {
	keys, err := s.st.Jobs()
	if err != nil {
		return nil, err
	}
	out := map[string][]store.JobKey{}
	for _, k := range keys {
		out[k.Kernel] = append(out[k.Kernel], k)
	}
	return out, nil
}

// listed is the kernel's jobs as listings show them: its own jobs, then
// the stored jobs of the same spec version that it does not tune, marked
// foreign: trials imported for another device class (a GPU's cache into a
// CPU or T1 kernel) or left by a former device. Whatever an import stores
// is listed and exported this way, before and after a restart.
func (s *server) listed(k *kernel, stored map[string][]store.JobKey) []*job {
	own := make(map[store.JobKey]bool, len(k.jobs))
	for _, j := range k.jobs {
		own[j.key] = true
	}
	out := slices.Clip(k.jobs)
	for _, key := range stored[k.spec.Name] {
		if key.SpecHash != k.spec.Hash || own[key] || len(k.jobs) == 0 {
			continue
		}
		j := &job{key: key, kern: k, spec: s.foreignSpec(k, key), foreign: true}
		// A lookup that verified a nearest answer's config at a problem
		// the kernel does not list made the record (nearest.go); a kernel
		// with tune_on_miss makes none (its miss jobs are its own).
		if !k.spec.TuneOnMiss {
			if r, ok, err := s.st.Requester(key); err != nil {
				s.log.Error().Err(err).Str("job_id", key.String()).Msg("who asked")
			} else if ok {
				j.requestedBy = &r
			}
		}
		out = append(out, j)
	}
	return out
}

// foreignSpec is the job spec a foreign job's keys are read with: that of
// the kernel's own job at the same problem, else the kernel's first job
// with the spec's space at that problem, else the first job as it is (a T1
// spec has one problem).
func (s *server) foreignSpec(k *kernel, key store.JobKey) spec.Job {
	for _, j := range k.jobs {
		if j.key.Problem == key.Problem {
			return j.spec
		}
	}
	sj := k.jobs[0].spec
	if dims, err := parseProblem(key.Problem); err == nil && sj.Evaluator != nil {
		// The space only: JobFor would start an evaluator (a harness
		// process) for every listing.
		if sp, err := s.sched.checks.spaceAt(k, sj.Evaluator, dims); err == nil {
			sj.Space = sp
		}
	}
	return sj
}

// listedOf is listed for one kernel by name, all problems or one.
func (s *server) listedOf(name, problem string) ([]*job, error) {
	k, ok := s.sched.kernel(name)
	if !ok {
		return nil, sockapi.NotFoundf("kernel %q is not loaded", name)
	}
	stored, err := s.storedJobs()
	if err != nil {
		return nil, err
	}
	jobs := s.listed(k, stored)
	if problem == "" {
		return jobs, nil
	}
	dims, err := parseProblem(problem)
	if err != nil {
		return nil, sockapi.Invalidf("problem %q: %v", problem, err)
	}
	p := evaluate.Problem{Dims: dims}.String()
	var out []*job
	for _, j := range jobs {
		if j.key.Problem == p {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		// Foreign jobs may have other dims; with none at this problem, a
		// problem of the wrong shape for the kernel is the caller's error.
		if _, err := k.parseProblem(problem); err != nil {
			return nil, err
		}
		return nil, sockapi.NotFoundf("kernel %q has no problem %s (have %s)", name, p, problemList(k))
	}
	return out, nil
}
