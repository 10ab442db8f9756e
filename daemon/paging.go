package daemon

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/quasim/quasim/api"
)

// A trials cursor names where the next page starts: the job, and the
// sequence number of the last trial of it already sent. On the wire it is
// opaque: base64url (unpadded) of "<job key>\n<seq>".

func encodeCursor(job string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(job + "\n" + strconv.FormatUint(seq, 10)))
}

func decodeCursor(s string) (job string, seq uint64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, fmt.Errorf("not a cursor this daemon made: %v", err)
	}
	job, n, ok := strings.Cut(string(b), "\n")
	if !ok || job == "" {
		return "", 0, fmt.Errorf("not a cursor this daemon made")
	}
	seq, err = strconv.ParseUint(n, 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("not a cursor this daemon made: sequence %q", n)
	}
	return job, seq, nil
}

// pageLimit reads ?limit= of things: def when absent, at most most.
func pageLimit(r *http.Request, def, most int, things string) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, invalidf("limit %q: want a number of %s from 1 to %d", v, things, most)
	}
	return n, nil
}

// kernelsPage is GET /v1/kernels?limit=&cursor= (api.KernelsPage). The
// cursor names the first job of the next page.
func (s *server) kernelsPage(r *http.Request) (api.KernelsPage, error) {
	limit, err := pageLimit(r, api.DefaultJobsLimit, api.MaxJobsLimit, "jobs")
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
		id, _, err := decodeCursor(c)
		if err != nil {
			return api.KernelsPage{}, invalidf("cursor %q: %v", c, err)
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
			return api.KernelsPage{}, invalidf("cursor %q: names job %s, which is no longer loaded (reloaded?); start again without a cursor", c, id)
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
				out.Next = encodeCursor(j.key.String(), 0)
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
				out.Next = encodeCursor(nj[0].key.String(), 0)
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
	limit, err := pageLimit(r, api.DefaultTrialsLimit, api.MaxTrialsLimit, "trials")
	if err != nil {
		return nil, err
	}
	first, after := 0, uint64(0)
	if c := q.Get("cursor"); c != "" {
		job, seq, err := decodeCursor(c)
		if err != nil {
			return nil, invalidf("cursor %q: %v", c, err)
		}
		first = -1
		for i, j := range jobs {
			if j.key.String() == job {
				first = i
			}
		}
		if first < 0 {
			return nil, invalidf("cursor %q: names job %s, which kernel %q no longer lists (reloaded?); start again without a cursor", c, job, name)
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
			out.Next = encodeCursor(j.key.String(), last)
		case len(out.Trials) == limit && i+1 < len(jobs):
			out.Next = encodeCursor(jobs[i+1].key.String(), 0)
		}
		if len(out.Trials) == limit {
			break
		}
	}
	return out, nil
}
