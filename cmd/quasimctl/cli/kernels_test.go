package cli

import (
	"reflect"
	"testing"

	"github.com/quasim/quasim/api"
)

func TestKernels(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "kernels")
	if code != 0 {
		t.Fatalf("kernels = %d, want 0 (stderr %q)", code, errs)
	}
	want := `KERNEL  EVALUATOR  SCHEDULE  PARAMS  CONFIGS  PROBLEM      DEVICE    TRIALS  SERVED                        TIME_MS  RUNNING
sgemm   builtin    @hourly   3       120      256,256,256  cpu/test  12      bx=16,unroll=True,kind=tiled  4.213    yes
sgemm                                         512,512,512  cpu/test  0       -                             -        no
k       replay     -         3       5        -            -         0       -                             -        no
locked  exec       -         1       0        -            -         0       -                             -        no
empty   builtin    -         0       0        -            -         0       -                             -        no
sgemm 512,512,512: added by a lookup of uid 65534 (nobody) (tune_on_miss)
`
	if out != want {
		t.Errorf("kernels =\n%s\nwant\n%s", out, want)
	}

	out, _, code = f.ctl(t, "kernels", "--json")
	if code != 0 {
		t.Fatalf("kernels --json = %d, want 0", code)
	}
	if got := decodeStrict[[]api.Kernel](t, out); !reflect.DeepEqual(got, f.kernels) {
		t.Errorf("kernels --json = %+v, want %+v", got, f.kernels)
	}
}
