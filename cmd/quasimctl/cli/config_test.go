package cli

import (
	"reflect"
	"testing"

	"github.com/quasim/quasim/api"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	f := newFakeDaemon(t)
	out, errs, code := f.ctl(t, "config", "sgemm", "--problem", "300,300,300", "--device", "cpu/test")
	if code != 0 {
		t.Fatalf("config = %d, want 0 (stderr %q)", code, errs)
	}
	want := `PARAM   VALUE
bx      16
kind    tiled
unroll  True

kernel:        sgemm
problem:       300,300,300
device:        cpu/test
key:           16,True,tiled
match:         nearest (from problem 128,128,128, confidence 0.80)
time_ms:       4.213 (95% CI 4.100–4.400, its certificate's)
speed-up:      2.25× (95% CI 2.10–2.41) over the default 32,False,naive (6 paired rounds)
certificate:   cert-123 (issued for problem 128,128,128, not verified at this one)
verification:  pending
`
	if out != want {
		t.Errorf("config =\n%s\nwant\n%s", out, want)
	}
	if q := f.lastQuery(); q != "GET /v1/configs/sgemm?device=cpu%2Ftest&problem=300%2C300%2C300" {
		t.Errorf("config sent %q", q)
	}

	out, _, code = f.ctl(t, "config", "sgemm", "--json")
	if code != 0 {
		t.Fatalf("config --json = %d, want 0", code)
	}
	if got := decodeStrict[api.Config](t, out); !reflect.DeepEqual(got, fakeConfig) {
		t.Errorf("config --json = %+v, want %+v", got, fakeConfig)
	}
}

func TestFmtMS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		sig  int
		want string
	}{
		{4.2134, 3, "4.21"},
		{4.2134, 4, "4.213"},
		{0, 3, "-"},
		{12.345, 3, "12.3"},
		{1234.6, 3, "1235"},
		{0.004217, 3, "0.00422"},
	}
	for _, tt := range tests {
		if got := fmtMS(tt.v, tt.sig); got != tt.want {
			t.Errorf("fmtMS(%v, %d) = %q, want %q", tt.v, tt.sig, got, tt.want)
		}
	}
}
