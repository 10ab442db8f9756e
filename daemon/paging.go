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

// pageLimit reads ?limit=: DefaultTrialsLimit when absent, at most
// MaxTrialsLimit.
func pageLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return api.DefaultTrialsLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > api.MaxTrialsLimit {
		return 0, invalidf("limit %q: want a number of trials from 1 to %d", v, api.MaxTrialsLimit)
	}
	return n, nil
}

func (s *server) getTrials(r *http.Request) (any, error) {
	name := r.PathValue("kernel")
	q := r.URL.Query()
	_, jobs, err := s.jobsOf(name, q.Get("problem"))
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(r)
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
