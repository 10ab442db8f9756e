package cli

import (
	"reflect"
	"strings"
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
		"trials:       42\nrunning:      1\n  sgemm/256,256,256/cpu\nwaiting:      0 (for an idle device)\n",
		"spec errors:  0\n",
		"last success: "+fmtTime(fakeT0)+"\n",
		"failing:      0\n",
	)

	out, _, code = f.ctl(t, "status", "--json")
	if code != 0 {
		t.Fatalf("status --json = %d, want 0", code)
	}
	if got := decodeStrict[api.Status](t, out); !reflect.DeepEqual(got, fakeStatus) {
		t.Errorf("status --json = %+v, want %+v", got, fakeStatus)
	}
}

// While cycles fail or a spec file did not load, status says so and exits
// 6, so it serves as a health check; before, it exited 0 and showed no
// failure.
func TestStatusUnhealthy(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t, func(f *fakeDaemon) { f.unhealthy = true })
	for _, args := range [][]string{{"status"}, {"status", "--json"}} {
		out, errs, code := f.ctl(t, args...)
		if code != 6 {
			t.Errorf("%s = %d, want 6 (stderr %q)", strings.Join(args, " "), code, errs)
		}
		mustContain(t, strings.Join(args, " ")+" stderr", errs,
			"quasimctl: 1 job failing (sgemm/512,512,512/cpu: lock: open /run/lock/quasim/cpu.lock: permission denied); 1 spec file did not load\n")
		if len(args) == 2 {
			if got := decodeStrict[api.Status](t, out); !reflect.DeepEqual(got, unhealthyStatus) {
				t.Errorf("status --json = %+v, want %+v", got, unhealthyStatus)
			}
			continue
		}
		mustContain(t, "status", out,
			"spec errors:  1\n  bad.yaml: line 3: unknown field \"bogus\"\n",
			"failing:      1\n  sgemm/512,512,512/cpu: failing since "+fmtTime(fakeT0.Add(50*60e9))+": cycle 3 failed at "+fmtTime(fakeT0.Add(3600e9))+
				" (last success "+fmtTime(fakeT0)+"; tried again at "+fmtTime(fakeT0.Add(64*60e9))+"): lock: open /run/lock/quasim/cpu.lock: permission denied\n",
		)
	}
}

// reload exits 6 when a spec file did not load, as status does, and 0 when
// all loaded; before, it exited 0 either way.
func TestReloadExitCode(t *testing.T) {
	t.Parallel()
	for _, unhealthy := range []bool{false, true} {
		f := newFakeDaemon(t, func(f *fakeDaemon) { f.unhealthy = unhealthy })
		for _, args := range [][]string{{"reload"}, {"reload", "--json"}} {
			out, errs, code := f.ctl(t, args...)
			want := 0
			if unhealthy {
				want = 6
				mustContain(t, "reload stderr", errs, "1 spec file did not load")
				mustContain(t, "reload", out, "bad.yaml")
			}
			if code != want {
				t.Errorf("%s with unhealthy=%v: exit %d, want %d (stderr %q)", strings.Join(args, " "), unhealthy, code, want, errs)
			}
		}
	}
}
