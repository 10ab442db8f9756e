package daemon

import (
	"net/http"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
)

// kernelsPage is GET /v1/kernels?limit=&cursor= (api.KernelsPage). The
// cursor names the first job of the next page.
func (s *server) kernelsPage(r *http.Request) (api.KernelsPage, error) {
	limit, err := sockapi.PageLimit(r, api.DefaultJobsLimit, api.MaxJobsLimit, "jobs")
	if err != nil {
		return api.KernelsPage{}, err
	}
	ks, _ := s.sched.snapshot()
	stored, err := s.storedJobs()
	if err != nil {
		return api.KernelsPage{}, err
	}
	// Each kernel's jobs as GET /v1/kernels lists them, foreign ones too.
	listed := make([][]*job, len(ks))
	for i, k := range ks {
		listed[i] = s.listed(k, stored)
	}
	firstK, firstJ := 0, 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		id, _, err := sockapi.ParseCursor(c)
		if err != nil {
			return api.KernelsPage{}, sockapi.Invalidf("cursor %q: %v", c, err)
		}
		firstK = -1
		for i := range ks {
			for n, j := range listed[i] {
				if j.key.String() == id {
					firstK, firstJ = i, n
				}
			}
		}
		if firstK < 0 {
			return api.KernelsPage{}, sockapi.Invalidf("cursor %q: names job %s, which is no longer loaded (reloaded?); start again without a cursor", c, id)
		}
	}
	next := s.sched.nextRuns()
	out := api.KernelsPage{Kernels: []api.Kernel{}}
	jobs := 0
	for i := firstK; i < len(ks); i++ {
		k := ks[i]
		ak := kernelInfo(k)
		from := 0
		if i == firstK {
			from = firstJ
		}
		for _, j := range listed[i][from:] {
			if jobs == limit {
				out.Next = sockapi.Cursor(j.key.String(), 0)
				break
			}
			aj, err := s.jobInfo(j, next)
			if err != nil {
				return api.KernelsPage{}, err
			}
			ak.Jobs = append(ak.Jobs, aj)
			jobs++
		}
		if out.Next != "" {
			if len(ak.Jobs) > 0 {
				out.Kernels = append(out.Kernels, ak)
			}
			return out, nil
		}
		out.Kernels = append(out.Kernels, ak)
		if jobs == limit && i+1 < len(ks) {
			// The page is full; the next kernel starts the next page.
			if nj := listed[i+1]; len(nj) > 0 {
				out.Next = sockapi.Cursor(nj[0].key.String(), 0)
				return out, nil
			}
		}
	}
	return out, nil
}

func (s *server) getTrials(r *http.Request) (any, error) {
	name := r.PathValue("kernel")
	q := r.URL.Query()
	jobs, err := s.listedOf(name, q.Get("problem"))
	if err != nil {
		return nil, err
	}
	limit, err := sockapi.PageLimit(r, api.DefaultTrialsLimit, api.MaxTrialsLimit, "trials")
	if err != nil {
		return nil, err
	}
	first, after := 0, uint64(0)
	if c := q.Get("cursor"); c != "" {
		job, seq, err := sockapi.ParseCursor(c)
		if err != nil {
			return nil, sockapi.Invalidf("cursor %q: %v", c, err)
		}
		first = -1
		for i, j := range jobs {
			if j.key.String() == job {
				first = i
			}
		}
		if first < 0 {
			return nil, sockapi.Invalidf("cursor %q: names job %s, which kernel %q no longer lists (reloaded?); start again without a cursor", c, job, name)
		}
		after = seq
	}
	out := api.Trials{Kernel: name, Trials: []api.Trial{}}
	if k, ok := s.sched.kernel(name); ok {
		out.Params = kernelInfo(k).Params
	}
	for i := first; i < len(jobs); i++ {
		j := jobs[i]
		from := uint64(0)
		if i == first {
			from = after
		}
		trials, last, more, err := s.st.TrialsAfter(j.key, from, limit-len(out.Trials))
		if err != nil {
			return nil, err
		}
		for _, t := range trials {
			out.Trials = append(out.Trials, apiTrial(t, j))
		}
		switch {
		case more:
			out.Next = sockapi.Cursor(j.key.String(), last)
		case len(out.Trials) == limit && i+1 < len(jobs):
			out.Next = sockapi.Cursor(jobs[i+1].key.String(), 0)
		}
		if len(out.Trials) == limit {
			break
		}
	}
	return out, nil
}
