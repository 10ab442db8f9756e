package daemon

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

func TestTrialsPaging(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	k, _ := ts.sched.kernel("sgemm")
	if len(k.jobs) < 2 {
		t.Fatalf("sgemm has %d jobs, want 2 or more", len(k.jobs))
	}
	var want []string
	for i, n := range []int{7, 5} {
		j := k.jobs[i]
		all := j.spec.Space.All()
		var trials []store.Trial
		for c := range n {
			trials = append(trials, store.Trial{Key: j.spec.Space.Key(all[c]), Status: "ok", TimeMS: 1, At: time.Unix(int64(c), 0)})
			want = append(want, j.key.Problem+" "+j.spec.Space.Key(all[c]))
		}
		if _, err := ts.st.AddTrials(j.key, trials); err != nil {
			t.Fatal(err)
		}
	}
	page := func(q string) (int, api.Trials) {
		status, body := ts.get(t, "/v1/kernels/sgemm/trials?"+q, nil)
		var tr api.Trials
		if status == 200 {
			if err := json.Unmarshal(body, &tr); err != nil {
				t.Fatal(err)
			}
		}
		return status, tr
	}
	for _, limit := range []int{1, 3, 5, 7, 12, 13} {
		var got []string
		cursor, pages := "", 0
		for {
			status, tr := page(fmt.Sprintf("limit=%d&cursor=%s", limit, cursor))
			if status != 200 || len(tr.Trials) > limit {
				t.Fatalf("limit %d: status %d, %d trials", limit, status, len(tr.Trials))
			}
			for _, x := range tr.Trials {
				got = append(got, x.Problem+" "+x.Key)
			}
			pages++
			if tr.Next == "" {
				break
			}
			if pages > len(want)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			cursor = tr.Next
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limit %d: paged trials\n%v\nwant\n%v", limit, got, want)
		}
		if max := (len(want)+limit-1)/limit + 1; pages > max {
			t.Errorf("limit %d: %d pages, want at most %d", limit, pages, max)
		}
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=x", fmt.Sprintf("limit=%d", api.MaxTrialsLimit+1), "cursor=***", "cursor=" + sockapi.Cursor("sgemm|x|1|cpu", 0)} {
		if status, _ := page(q); status != 400 {
			t.Errorf("GET trials?%s = %d, want 400", q, status)
		}
	}
}

func TestTrialsDefaultPage(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	k, _ := ts.sched.kernel("sgemm")
	j := k.jobs[0]
	all := j.spec.Space.All()
	n := min(len(all), api.DefaultTrialsLimit+5)
	if n <= api.DefaultTrialsLimit {
		t.Skipf("sgemm's first job has only %d configs", len(all))
	}
	var trials []store.Trial
	for c := range n {
		trials = append(trials, store.Trial{Key: j.spec.Space.Key(all[c]), Status: "ok", TimeMS: 1})
	}
	if _, err := ts.st.AddTrials(j.key, trials); err != nil {
		t.Fatal(err)
	}
	status, body := ts.get(t, "/v1/kernels/sgemm/trials?problem="+j.key.Problem, nil)
	var tr api.Trials
	if status != 200 || json.Unmarshal(body, &tr) != nil {
		t.Fatalf("GET trials = %d %.200s", status, body)
	}
	if len(tr.Trials) != api.DefaultTrialsLimit || tr.Next == "" {
		t.Errorf("a page with no limit holds %d trials, next %q; want %d and a cursor", len(tr.Trials), tr.Next, api.DefaultTrialsLimit)
	}
}

func TestKernelsPaging(t *testing.T) {
	ts := newTestServer(t, filepath.Join(t.TempDir(), "none"))
	status, body := ts.get(t, "/v1/kernels", nil)
	var all []api.Kernel
	if status != 200 || json.Unmarshal(body, &all) != nil {
		t.Fatalf("GET /v1/kernels = %d %.200s", status, body)
	}
	var want []string
	for _, k := range all {
		for _, j := range k.Jobs {
			want = append(want, k.Name+" "+j.ID)
		}
	}
	if len(want) < 4 {
		t.Fatalf("%d builtin jobs, want 4 or more", len(want))
	}
	for _, limit := range []int{1, 2, 3, len(want) - 1, len(want), len(want) + 1} {
		var got []string
		cursor, pages := "", 0
		for {
			status, body := ts.get(t, fmt.Sprintf("/v1/kernels?limit=%d&cursor=%s", limit, cursor), nil)
			var page api.KernelsPage
			if status != 200 || json.Unmarshal(body, &page) != nil {
				t.Fatalf("limit %d: GET = %d %.200s", limit, status, body)
			}
			n := 0
			for _, k := range page.Kernels {
				if k.Configs == 0 || len(k.Params) == 0 {
					t.Errorf("limit %d: kernel %s without params or configs", limit, k.Name)
				}
				for _, j := range k.Jobs {
					got = append(got, k.Name+" "+j.ID)
					n++
				}
			}
			if n > limit {
				t.Fatalf("limit %d: a page of %d jobs", limit, n)
			}
			pages++
			if page.Next == "" {
				break
			}
			if pages > len(want)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			cursor = page.Next
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limit %d: paged jobs\n%v\nwant\n%v", limit, got, want)
		}
	}
	for _, q := range []string{"limit=0", "limit=x", fmt.Sprintf("limit=%d", api.MaxJobsLimit+1), "cursor=***", "cursor=" + sockapi.Cursor("nope|x|1|cpu", 0)} {
		if status, _ := ts.get(t, "/v1/kernels?"+q, nil); status != 400 {
			t.Errorf("GET /v1/kernels?%s = %d, want 400", q, status)
		}
	}
}
