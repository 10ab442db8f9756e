package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// FuzzOpenDamaged feeds arbitrary state files, seeded with a real one and
// damaged copies, to CheckFile, Open and Salvage: they may refuse a file,
// and must not panic, fault, hang or write to a file they find damaged.
func FuzzOpenDamaged(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.db")
	s, err := Open(path, Options{})
	if err != nil {
		f.Fatal(err)
	}
	job := JobKey{Kernel: "k", SpecHash: "h", Problem: "8", Device: "cpu/x"}
	cy, err := s.NewCycle(job, Cycle{Trigger: "api"})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Checkpoint(job, []Trial{{Key: "1,2", Status: "ok", TimeMS: 1, TimesMS: []float64{1, 1}}}, []byte("policy"), &cy); err != nil {
		f.Fatal(err)
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	for _, at := range []int{20, 4096 + 40, 2*4096 + 8, len(good) - 100} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "quasim.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := CheckFile(p, Options{CheckTimeout: 5 * time.Second})
		if err == nil && !rep.Damaged() {
			if s, err := Open(p, Options{}); err == nil {
				_, _ = s.Jobs()
				_, _ = s.Trials(job)
				_ = s.Close()
			}
			return
		}
		if err == nil {
			if now, _ := os.ReadFile(p); !bytes.Equal(now, data) {
				t.Fatalf("a damaged file was written to")
			}
			_, _ = Salvage(p, filepath.Join(t.TempDir(), "new.db"), Options{})
		}
	})
}
