package store

import (
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every record decoder: they may fail,
// only with ErrCorrupt, and must not panic.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"v":1,"key":"8,8","status":"ok","time_ms":1.5,"times_ms":[1.5,1.6],"cost_s":0.2,"at":"2025-01-01T00:00:00Z","cycle":2}`,
		`{"v":1,"id":3,"trigger":"cron","state":"done","started":"2025-01-01T00:00:00Z","ended":"2025-01-01T00:01:00Z","budget":10,"evals":10}`,
		`{"v":1,"name":"sgemm","hash":"h","source":"builtin","raw":"AAEC","loaded":"2025-01-01T00:00:00Z"}`,
		`{"v":1,"key":"8,8","time_ms":1.5,"cycle":1,"promoted_at":"2025-01-01T00:00:00Z"}`,
		`{"v":1,"at":"2025-01-01T00:00:00Z","latency_ms":1.5,"key":"8,8"}`,
		`{"v":1,"kernel":"k","spec_hash":"h","problem":"p","device":"d","created":"2025-01-01T00:00:00Z"}`,
		`{"v":1,"meta":{"id":"c1","key":"8,8","time_ms":1.5,"issued_at":"2025-01-01T00:00:00Z"},"job":"k|h|p|d","body":"c2lnbmVk"}`,
		`{"v":1,"reason":"wrong result on driver 551","revoked_at":"2025-01-02T00:00:00Z"}`,
		`{"v":1,"body":"not base64!"}`,
		`{"v":2}`, `null`, `[]`, `{"at":"yesterday"}`, "\x00\x00\x00\x00\x00\x00\x00\x01", "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const where = "v1/fuzz"
		errs := []error{}
		_, err := decodeTrial(data, where)
		errs = append(errs, err)
		_, err = decodeCycle(data, where)
		errs = append(errs, err)
		_, err = decodeSpec(data, where)
		errs = append(errs, err)
		_, err = decodeServed(data, where)
		errs = append(errs, err)
		_, err = decodeObservation(data, where)
		errs = append(errs, err)
		_, err = decodeJob(data, where)
		errs = append(errs, err)
		_, err = decodeCert(data, where)
		errs = append(errs, err)
		_, err = decodeRevocation(data, where)
		errs = append(errs, err)
		_, _, err = certFromRecord(data, []byte("c1"))
		errs = append(errs, err)
		_, err = decodeU64(data, where)
		errs = append(errs, err)
		for i, err := range errs {
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Errorf("decoder %d(%q) = %v, want nil or ErrCorrupt", i, data, err)
			}
		}
		if k, err := ParseJobKey(string(data)); err == nil && k.String() != string(data) {
			t.Errorf("ParseJobKey(%q).String() = %q", data, k.String())
		}
	})
}
