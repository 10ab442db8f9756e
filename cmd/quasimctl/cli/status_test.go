package cli

import (
	"reflect"
	"testing"

	"github.com/quasim/quasim/api"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "status")
	if code != 0 {
		t.Fatalf("status = %d, want 0 (stderr %q)", code, errs)
	}
	mustContain(t, "status", out,
		"version:      v9\n",
		"uptime:       1h2m5s (since ",
		"state dir:    /var/lib/quasim\n",
		"spec dir:     /etc/quasim/kernels.d\n",
		"kernels:      2\n",
		"jobs:         3\n",
		"trials:       42\nrunning:      1\n  sgemm/256,256,256/cpu\n",
		"spec errors:  1\n  bad.yaml: line 3: unknown field \"bogus\"\n",
	)

	out, _, code = f.ctl(t, "status", "--json")
	if code != 0 {
		t.Fatalf("status --json = %d, want 0", code)
	}
	if got := decodeStrict[api.Status](t, out); !reflect.DeepEqual(got, fakeStatus) {
		t.Errorf("status --json = %+v, want %+v", got, fakeStatus)
	}
}
