package store

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// rawFile builds a state file at a fresh path with bbolt directly.
func rawFile(t *testing.T, build func(tx *bolt.Tx) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "quasim.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(build); err != nil {
		t.Fatalf("build file: %v", err)
	}
	return path
}

// openTest opens path and closes it when the test ends, after a check.
func openTest(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// bucketNames lists the buckets (and, as "key=value", the keys) of the root
// bucket, in bbolt order.
func bucketNames(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		return r.ForEach(func(k, v []byte) error {
			if v != nil {
				out = append(out, string(k)+"="+string(v))
			} else {
				out = append(out, string(k))
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigrationsOrdered(t *testing.T) {
	t.Parallel()
	for i, m := range migrations {
		if m.version != i+1 || m.migrate == nil {
			t.Errorf("migrations[%d] has version %d (migrate nil: %v), want version %d", i, m.version, m.migrate == nil, i+1)
		}
	}
}

func TestOpenFreshRunsAll(t *testing.T) {
	t.Parallel()
	s := openTest(t, filepath.Join(t.TempDir(), "quasim.db"))
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=" + strconv.Itoa(len(migrations)), "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
}

// TestMigration1 starts from a file with no quasim data (another tool's
// bucket in it) and checks version 1 creates the tree of schema 1.
func TestMigration1(t *testing.T) {
	t.Parallel()
	path := rawFile(t, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("other"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := migrations[0].migrate(tx); err != nil {
			return err
		}
		var got []string
		err := tx.Bucket(bucketRoot).ForEach(func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		})
		want := []string{"cycles", "observations", "policies", "served", "specs", "trials"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("after migration 1 root holds %q, want %q", got, want)
		}
		if string(tx.Bucket([]byte("other")).Get([]byte("k"))) != "v" {
			t.Error("migration 1 changed a foreign bucket")
		}
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	// Through Open, from the empty layout, the version key ends current.
	path = rawFile(t, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
}

// TestMigration2 builds a schema-1 file by hand, with records of several
// jobs spread over the job buckets, and checks Open backfills jobs.
func TestMigration2(t *testing.T) {
	t.Parallel()
	jobTrials := JobKey{Kernel: "sgemm", SpecHash: "h", Problem: "64", Device: "cpu/x"}
	jobPolicy := JobKey{Kernel: "axpy", SpecHash: "h", Problem: "1e6", Device: "cpu/x"}
	jobServed := JobKey{Kernel: "conv", Problem: "3x3"}
	jobObs := JobKey{Kernel: "zz", SpecHash: "h"}
	t1, t2, t3 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	put := func(b *bolt.Bucket, k []byte, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return b.Put(k, data)
	}
	sub := func(b *bolt.Bucket, names ...string) (*bolt.Bucket, error) {
		var err error
		for _, n := range names {
			if b, err = b.CreateBucketIfNotExists([]byte(n)); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	path := rawFile(t, func(tx *bolt.Tx) error {
		r, err := tx.CreateBucket([]byte("v1"))
		if err != nil {
			return err
		}
		if err := r.Put([]byte("version"), []byte("1")); err != nil {
			return err
		}
		for _, n := range []string{"specs", "trials", "policies", "served", "cycles", "observations"} {
			if _, err := r.CreateBucket([]byte(n)); err != nil {
				return err
			}
		}
		seq, err := sub(r, "trials", jobTrials.String(), "seq")
		if err != nil {
			return err
		}
		if err := put(seq, u64(1), map[string]any{"v": 1, "key": "1", "status": "ok", "at": t1}); err != nil {
			return err
		}
		keys, err := sub(r, "trials", jobTrials.String(), "keys")
		if err != nil {
			return err
		}
		if err := keys.Put([]byte("1"), u64(1)); err != nil {
			return err
		}
		cyc, err := sub(r, "cycles", jobTrials.String())
		if err != nil {
			return err
		}
		if err := put(cyc, u64(1), map[string]any{"v": 1, "id": 1, "started": t2}); err != nil {
			return err
		}
		if err := r.Bucket([]byte("policies")).Put([]byte(jobPolicy.String()), []byte("opaque")); err != nil {
			return err
		}
		if err := put(r.Bucket([]byte("served")), []byte(jobServed.String()), map[string]any{"v": 1, "key": "k"}); err != nil {
			return err
		}
		obs, err := sub(r, "observations", jobObs.String())
		if err != nil {
			return err
		}
		return put(obs, observationKey(t3, 1), map[string]any{"v": 1, "at": t3, "key": "k"})
	})

	before := time.Now()
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []JobKey{jobPolicy, jobServed, jobTrials, jobObs}
	got, err := s.Jobs()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Jobs() = %v, %v, want %v", got, err, want)
	}
	created := map[string]time.Time{}
	err = s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRoot).Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			rec, err := decodeJob(v, string(k))
			created[string(k)] = rec.Created
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for job, want := range map[JobKey]time.Time{jobTrials: t2, jobObs: t3} {
		if got := created[job.String()]; !got.Equal(want) {
			t.Errorf("created of %q = %v, want %v (its earliest record)", job.String(), got, want)
		}
	}
	for _, job := range []JobKey{jobPolicy, jobServed} {
		if got := created[job.String()]; got.Before(before.Add(-time.Second)) {
			t.Errorf("created of %q = %v, want the migration time", job.String(), got)
		}
	}
	// The schema-1 records read as before.
	if trials, err := s.Trials(jobTrials); err != nil || len(trials) != 1 || !trials[0].At.Equal(t1) {
		t.Errorf("Trials after migration = %+v, %v", trials, err)
	}
	if p, ok, err := s.Policy(jobPolicy); err != nil || !ok || string(p) != "opaque" {
		t.Errorf("Policy after migration = %q, %v, %v", p, ok, err)
	}
}

func TestMigration2BadJobKey(t *testing.T) {
	t.Parallel()
	path := rawFile(t, func(tx *bolt.Tx) error {
		if err := createTree(tx); err != nil {
			return err
		}
		r := tx.Bucket(bucketRoot)
		if err := r.Put(keyVersion, []byte("1")); err != nil {
			return err
		}
		return r.Bucket(bucketPolicies).Put([]byte("no-separators"), []byte("p"))
	})
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
	// The failed migration rolled back: the file is still at schema 1.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v, _ := readVersion(tx); v != 1 || tx.Bucket(bucketRoot).Bucket(bucketJobs) != nil {
			t.Errorf("after a failed migration version = %d, jobs bucket present = %v; want 1, false", v, tx.Bucket(bucketRoot).Bucket(bucketJobs) != nil)
		}
		return nil
	})
}

// TestMigration3 builds a schema-2 file by hand, with a record in every
// bucket, and checks Open adds the empty certificate buckets and leaves
// the rest as it was.
func TestMigration3(t *testing.T) {
	t.Parallel()
	job := JobKey{Kernel: "sgemm", SpecHash: "h", Problem: "64", Device: "cpu/x"}
	jk := job.String()
	t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	records := []rawRec{
		{[]string{"specs", "sgemm"}, []byte("h"), `{"v":1,"name":"sgemm","hash":"h","source":"builtin","raw":"AAE=","loaded":"2025-03-01T00:00:00Z"}`},
		{[]string{"jobs"}, []byte(jk), `{"v":1,"kernel":"sgemm","spec_hash":"h","problem":"64","device":"cpu/x","created":"2025-03-01T00:00:00Z"}`},
		{[]string{"trials", jk, "seq"}, u64(1), `{"v":1,"key":"8,8","status":"ok","time_ms":1.5,"cost_s":0.1,"at":"2025-03-01T00:00:00Z","cycle":1}`},
		{[]string{"trials", jk, "keys"}, []byte("8,8"), string(u64(1))},
		{[]string{"policies"}, []byte(jk), "opaque"},
		{[]string{"served"}, []byte(jk), `{"v":1,"key":"8,8","time_ms":1.5,"cycle":1,"promoted_at":"2025-03-01T00:00:00Z","certificate":"old"}`},
		{[]string{"cycles", jk}, u64(1), `{"v":1,"id":1,"trigger":"cron","state":"done","started":"2025-03-01T00:00:00Z","budget":4,"evals":1}`},
		{[]string{"observations", jk}, observationKey(t1, 1), `{"v":1,"at":"2025-03-01T00:00:00Z","latency_ms":1.6,"key":"8,8"}`},
	}
	path := schemaFile(t, "2", []string{"specs", "jobs", "trials", "policies", "served", "cycles", "observations"}, records)

	// A read-only open cannot migrate.
	if s, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("read-only Open of schema 2 = %v, want ErrReadOnly", err)
	}

	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=" + strconv.Itoa(len(migrations)), "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
	// The new buckets are empty; the old records are byte for byte as built.
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		for _, n := range [][]byte{bucketCerts, bucketRevocations, bucketJobCerts} {
			if k, _ := r.Bucket(n).Cursor().First(); k != nil {
				t.Errorf("bucket %s not empty after migration: holds %q", n, k)
			}
		}
		for _, rec := range records {
			b := r
			for _, n := range rec.buckets {
				if b = b.Bucket([]byte(n)); b == nil {
					t.Errorf("bucket %q gone after migration", rec.buckets)
					return nil
				}
			}
			if got := b.Get(rec.key); string(got) != rec.value {
				t.Errorf("%q/%q after migration = %q, want %q", rec.buckets, rec.key, got, rec.value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.Jobs(); err != nil || !reflect.DeepEqual(jobs, []JobKey{job}) {
		t.Errorf("Jobs() = %v, %v, want [%v]", jobs, err, job)
	}
	if trials, err := s.Trials(job); err != nil || len(trials) != 1 || trials[0].Key != "8,8" || !trials[0].At.Equal(t1) {
		t.Errorf("Trials() = %+v, %v, want the trial 8,8", trials, err)
	}
	if sv, ok, err := s.Served(job); err != nil || !ok || sv.Certificate != "old" {
		t.Errorf("Served() = %+v, %v, %v, want certificate old", sv, ok, err)
	}
	if certs, err := s.Certs(); err != nil || certs == nil || len(certs) != 0 {
		t.Errorf("Certs() = %v, %v, want empty", certs, err)
	}
	if certs, err := s.JobCerts(job); err != nil || certs == nil || len(certs) != 0 {
		t.Errorf("JobCerts() = %v, %v, want empty", certs, err)
	}
	// The migrated file takes certificates.
	if err := s.PutCert(job, CertMeta{ID: "c1", Key: "8,8", TimeMS: 1.5, IssuedAt: t1}, []byte("signed")); err != nil {
		t.Fatal(err)
	}
	if body, meta, err := s.Cert("c1"); err != nil || string(body) != "signed" || meta.Job != job {
		t.Errorf("Cert(c1) = %q, %+v, %v", body, meta, err)
	}
}

// TestMigration4 builds a schema-3 file by hand and checks Open adds the
// empty spans bucket, keeps the other records byte for byte, and that the
// migrated file takes spans.
func TestMigration4(t *testing.T) {
	t.Parallel()
	job := JobKey{Kernel: "sgemm", SpecHash: "h", Problem: "64", Device: "cpu/x"}
	jk := job.String()
	records := []rawRec{
		{[]string{"jobs"}, []byte(jk), `{"v":1,"kernel":"sgemm","spec_hash":"h","problem":"64","device":"cpu/x","created":"2025-03-01T00:00:00Z"}`},
		{[]string{"cycles", jk}, u64(1), `{"v":1,"id":1,"trigger":"cron","state":"done","started":"2025-03-01T00:00:00Z","budget":4,"evals":1}`},
		{[]string{"certs"}, []byte("c1"), `{"v":1,"meta":{"id":"c1","key":"8,8","time_ms":1.5,"issued_at":"2025-03-01T00:00:00Z"},"job":"` + jk + `","body":"c2lnbmVk"}`},
		{[]string{"jobcerts", jk}, []byte("c1"), ""},
	}
	path := schemaFile(t, "3", []string{"specs", "jobs", "trials", "policies", "served", "cycles", "observations", "certs", "revocations", "jobcerts"}, records)
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=" + strconv.Itoa(len(migrations)), "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		if k, _ := r.Bucket(bucketSpans).Cursor().First(); k != nil {
			t.Errorf("spans not empty after migration: holds %q", k)
		}
		for _, rec := range records {
			b := r
			for _, n := range rec.buckets {
				b = b.Bucket([]byte(n))
			}
			if got := b.Get(rec.key); string(got) != rec.value {
				t.Errorf("%q/%q after migration = %q, want %q", rec.buckets, rec.key, got, rec.value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSpans("p", SpanBatch{Count: 1, Spans: []byte(`[{"id":1}]`)}, SpanRetention{}); err != nil {
		t.Fatalf("AddSpans after migration: %v", err)
	}
	if got, err := s.SpanBatches("p"); err != nil || len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("SpanBatches(p) = %+v, %v", got, err)
	}
}

// rawRec is a record to put in a hand-built file: its buckets under the
// root, key and value.
type rawRec struct {
	buckets []string
	key     []byte
	value   string
}

// schemaFile builds a file of the given schema version with the top-level
// buckets tops and the records recs.
func schemaFile(t *testing.T, version string, tops []string, recs []rawRec) string {
	t.Helper()
	return rawFile(t, func(tx *bolt.Tx) error {
		r, err := tx.CreateBucket([]byte("v1"))
		if err != nil {
			return err
		}
		if err := r.Put([]byte("version"), []byte(version)); err != nil {
			return err
		}
		for _, n := range tops {
			if _, err := r.CreateBucket([]byte(n)); err != nil {
				return err
			}
		}
		for _, rec := range recs {
			b := r
			for _, n := range rec.buckets {
				if b, err = b.CreateBucketIfNotExists([]byte(n)); err != nil {
					return err
				}
			}
			if err := b.Put(rec.key, []byte(rec.value)); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestMigration5 builds a schema-4 file by hand and checks Open adds the
// empty experiments bucket, keeps the other records byte for byte, and
// that the migrated file takes experiments.
func TestMigration5(t *testing.T) {
	t.Parallel()
	records := []rawRec{
		{[]string{"spans", "builtin"}, append(u64(1), 0, 0, 0, 1), `{"v":1,"at":"2025-03-01T00:00:00Z","n":1,"spans":[{"id":1,"pipeline":"builtin","kernel":"k","start_ns":0,"end_ns":5}]}`},
	}
	path := schemaFile(t, "4", []string{"specs", "jobs", "trials", "policies", "served", "cycles", "observations", "certs", "revocations", "jobcerts", "spans"}, records)
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=" + strconv.Itoa(len(migrations)), "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		if k, _ := r.Bucket(bucketExperiments).Cursor().First(); k != nil {
			t.Errorf("experiments not empty after migration: holds %q", k)
		}
		if got := r.Bucket(bucketSpans).Bucket([]byte("builtin")).Get(records[0].key); string(got) != records[0].value {
			t.Errorf("span batch after migration = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := s.NewExperiment(Experiment{Pipeline: "builtin", Report: []byte(`{}`)}); err != nil || ex.ID != 1 {
		t.Fatalf("NewExperiment after migration = %+v, %v", ex, err)
	}
}

// TestMigration6 builds a schema-5 file by hand and checks Open adds the
// empty zonings bucket, keeps the other records byte for byte, and that
// the migrated file takes zonings.
func TestMigration6(t *testing.T) {
	t.Parallel()
	records := []rawRec{
		{[]string{"experiments", "infer"}, u64(1), `{"v":1,"id":1,"pipeline":"infer","at":"2025-03-01T00:00:00Z","report":{"runs":3}}`},
	}
	path := schemaFile(t, "5", []string{"specs", "jobs", "trials", "policies", "served", "cycles", "observations", "certs", "revocations", "jobcerts", "spans", "experiments"}, records)
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != len(migrations) {
		t.Errorf("SchemaVersion() = %d, %v, want %d", v, err, len(migrations))
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=" + strconv.Itoa(len(migrations)), "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		if k, _ := r.Bucket(bucketZonings).Cursor().First(); k != nil {
			t.Errorf("zonings not empty after migration: holds %q", k)
		}
		if got := r.Bucket(bucketExperiments).Bucket([]byte("infer")).Get(records[0].key); string(got) != records[0].value {
			t.Errorf("experiment after migration = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutZoning(Zoning{Pipeline: "infer", Result: []byte(`{}`)}); err != nil {
		t.Fatalf("PutZoning after migration: %v", err)
	}
	if z, ok, err := s.Zoning("infer"); err != nil || !ok || z.Pipeline != "infer" {
		t.Fatalf("Zoning after migration = %+v, %v, %v", z, ok, err)
	}
}

// TestMigration7 builds a schema-6 file by hand and checks Open adds the
// empty reports and fleet buckets, keeps the other records byte for byte,
// and that the migrated file takes reports and fleet records.
func TestMigration7(t *testing.T) {
	t.Parallel()
	records := []rawRec{
		{[]string{"zonings"}, []byte("infer"), `{"v":1,"pipeline":"infer","section":"s","jobs":[],"configs":[],"tuned_at":"2025-03-01T00:00:00Z","result":{}}`},
	}
	path := schemaFile(t, "6", []string{"specs", "jobs", "trials", "policies", "served", "cycles", "observations", "certs", "revocations", "jobcerts", "spans", "experiments", "zonings"}, records)
	s := openTest(t, path)
	if v, err := s.SchemaVersion(); err != nil || v != 7 {
		t.Errorf("SchemaVersion() = %d, %v, want 7", v, err)
	}
	want := []string{"certs", "cycles", "experiments", "fleet", "jobcerts", "jobs", "observations", "policies", "reports", "revocations", "served", "spans", "specs", "trials", "version=7", "zonings"}
	if got := bucketNames(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
	err := s.view(func(tx *bolt.Tx) error {
		r := tx.Bucket(bucketRoot)
		for _, b := range [][]byte{bucketReports, bucketFleet} {
			if k, _ := r.Bucket(b).Cursor().First(); k != nil {
				t.Errorf("%s not empty after migration: holds %q", b, k)
			}
		}
		if got := r.Bucket(bucketZonings).Get(records[0].key); string(got) != records[0].value {
			t.Errorf("zoning after migration = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddReport(FaultReport{Cert: "c1", Reporter: "uid:1000", Last: time.Now()}, 8); err != nil {
		t.Fatalf("AddReport after migration: %v", err)
	}
	if ok, err := s.PutFleetRecord(FleetRecord{Key: "revoke.c1", Data: []byte("{}")}, 8); err != nil || !ok {
		t.Fatalf("PutFleetRecord after migration: %v, %v", ok, err)
	}
}
