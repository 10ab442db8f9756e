package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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
		`{"v":1,"at":"2025-01-01T00:00:00Z","n":1,"spans":[{"id":1}]}`,
		`{"v":1,"id":2,"pipeline":"builtin","at":"2025-01-01T00:00:00Z","report":{"runs":10}}`,
		`{"v":1,"pipeline":"infer","section":"chain=conv2d,reduce","jobs":["k|h|p|d"],"configs":["1"],"tuned_at":"2025-01-01T00:00:00Z","result":{"map":null}}`,
		`{"v":1,"cert":"c1","job":"k|h|p|d","key":"8,8","reporter":"uid:1","error":0.5,"count":2,"first":"2025-01-01T00:00:00Z","last":"2025-01-01T00:00:00Z"}`,
		`{"v":1,"key":"cert.a","data":"eyJ2IjoxfQ==","at":"2025-01-01T00:00:00Z"}`, `{"v":1,"synced":"2025-01-01T00:00:00Z"}`,
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
		_, err = decodeSpanRecord([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1}, data, where)
		errs = append(errs, err)
		_, err = decodeExperiment(data, where)
		errs = append(errs, err)
		_, err = decodeZoning([]byte("infer"), data, where)
		errs = append(errs, err)
		_, err = decodeReport([]byte("c1/uid:1"), data, where)
		errs = append(errs, err)
		_, err = decodeFleet([]byte("cert.a"), data, where)
		errs = append(errs, err)
		_, err = decodeFleet(keyFleetSynced, data, where)
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
//
// The seeds are small on purpose: the real file is copied into pages of
// 512 bytes (the least bbolt allows) and cut after its last page in use,
// about 8 KiB instead of 64. The engine minimizes each input that finds new
// code by removing one byte at a time, and a 64 KiB input kept it busy for
// the whole -fuzzminimizetime (60 s by default) each time.
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
	small := filepath.Join(dir, "small.db")
	if err := compactTo(small, path, 512); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(small)
	if err != nil {
		f.Fatal(err)
	}
	good = good[:inUse(good)]
	if rep, err := CheckFile(small, Options{}); err != nil || rep.Damaged() {
		f.Fatalf("the seed does not check clean: %+v, %v", rep, err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	for _, at := range []int{20, 512 + 40, 2*512 + 8, len(good) - 100} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := scratch(t)
		p := filepath.Join(dir, "quasim.db")
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
			_, _ = Salvage(p, filepath.Join(dir, "new.db"), Options{})
		}
	})
}

// scratch returns a new directory for one input of FuzzOpenDamaged, on
// the memory file system /dev/shm where there is one. Each damaged input
// is salvaged into a new bbolt file, which bbolt fsyncs whatever its
// options say; on a busy disk that, and creating and removing the
// directory, cut the engine from about 1,300 inputs a second to 100.
func scratch(t *testing.T) string {
	if dir, err := os.MkdirTemp("/dev/shm", "FuzzOpenDamaged"); err == nil {
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	return t.TempDir()
}

// compactTo copies the bbolt file from into a new file to of pages of
// pageSize bytes.
func compactTo(to, from string, pageSize int) error {
	src, err := bolt.Open(from, fileMode, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := bolt.Open(to, fileMode, &bolt.Options{PageSize: pageSize, NoSync: true})
	if err != nil {
		return err
	}
	if err := bolt.Compact(dst, src, 0); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

// inUse returns how many bytes of the bbolt file data its pages in use
// take: bbolt grows a file ahead of its pages, and what lies past them is
// never read.
func inUse(data []byte) int {
	m0, m1 := data[pageHeaderSize:], data[512+pageHeaderSize:] // pages of 512 bytes
	m := m0
	if le := binary.LittleEndian; le.Uint64(m1[48:]) > le.Uint64(m0[48:]) {
		m = m1
	}
	return int(binary.LittleEndian.Uint64(m[40:])) * int(binary.LittleEndian.Uint32(m[8:]))
}
