package daemon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/store"
)

// A served config recorded before the kernel's parameters changed (reduce
// had four before its input precision was added) is no longer in the
// job's space: a lookup answers the default, not an error, and the job
// serves again once a cycle certifies a config of the current space.
func TestServedKeyOutsideSpace(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, "")
	k, ok := ts.sched.kernel("reduce")
	if !ok {
		t.Fatal("reduce not loaded")
	}
	j := k.jobs[0]
	old := "65536,8,1,float32" // a key of reduce's space before input was added
	if err := ts.st.PutServed(j.key, store.Served{Key: old, TimeMS: 1, PromotedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ts.srv.sched.index.invalidate(j.key)
	status, body := ts.get(t, "/v1/configs/reduce?problem="+j.key.Problem, nil)
	var c api.Config
	json.Unmarshal(body, &c)
	if status != 200 || c.Match != api.MatchDefault || c.Key != j.spec.Space.Key(j.spec.Default) {
		t.Fatalf("lookup = %d %s, want the default", status, body)
	}
	if status, body := ts.get(t, "/v1/kernels", nil); status != 200 {
		t.Errorf("kernels = %d %s", status, body)
	}
}
