// Package store keeps quasimd's state in one bbolt file: the loaded kernel
// specs and, for every job (a kernel spec version at one problem size on one
// device class), its measured trials, its search policy, its served config,
// the history of its tuning cycles, the latencies runtimes observed and the
// signed certificates of the configs it served, with their revocations.
//
// Open opens (or creates) the file, takes its lock and brings its schema up
// to date; all access then goes through typed methods on *Store, each of them
// one db.View or db.Update transaction. No []byte owned by bbolt outlives
// its transaction: values are decoded or copied before the closure returns.
//
// # Buckets
//
// Everything lives under one root bucket. Keys written <like this> are
// variable; every JSON value carries "v":1, the version of its record
// format, so `bbolt get` output stays readable and a record that does not
// decode is reported as ErrCorrupt naming its bucket and key.
//
//	v1/                                  root bucket (its name is fixed; the schema version is the "version" key)
//	├── version                          decimal schema version, "7"; equals len(migrations) after Open
//	├── specs/                           kernel specs, every version ever loaded
//	│   └── <name>/                      one bucket per spec name
//	│       └── <hash>                   Spec JSON {"v":1,"name","hash","source","raw","loaded"}
//	├── jobs/                            registry of every job with any record (added in schema 2)
//	│   └── <jobkey>                     {"v":1,"kernel","spec_hash","problem","device","created","requested_by"?:{"uid","user","at"}}
//	├── trials/
//	│   └── <jobkey>/
//	│       ├── seq/                     insertion order; the bucket sequence is the last trial number
//	│       │   └── <8-byte seq>         Trial JSON {"v":1,"key","status","time_ms",...}
//	│       └── keys/                    index of the config keys already measured
//	│           └── <config key>         8-byte seq of that trial in seq/
//	├── policies/
//	│   └── <jobkey>                     the strategy's marshalled search state: raw, opaque bytes (no JSON)
//	├── served/
//	│   └── <jobkey>                     Served JSON {"v":1,"key","time_ms","cycle","promoted_at","certificate"}
//	├── cycles/
//	│   └── <jobkey>/                    the bucket sequence is the last cycle ID handed out
//	│       └── <8-byte id>              Cycle JSON {"v":1,"id","trigger","state","started",...}
//	├── observations/
//	│   └── <jobkey>/                    the bucket sequence numbers observations
//	│       └── <8-byte time><8-byte seq> Observation JSON {"v":1,"at","latency_ms","key","source"}
//	├── certs/                           signed certificates (added in schema 3)
//	│   └── <cert id>                    {"v":1,"meta":{"id","key","time_ms","issued_at"},"job":<jobkey>,"body":<base64 signed bytes>}
//	├── revocations/                     revoked certificates (added in schema 3)
//	│   └── <cert id>                    {"v":1,"reason","revoked_at"}; a certificate without one is live
//	├── jobcerts/                        index of each job's certificates (added in schema 3)
//	│   └── <jobkey>/
//	│       └── <cert id>                empty value
//	├── spans/                           pipelines' spans, as runtimes posted them (added in schema 4)
//	│   └── <pipeline>/                  the bucket sequence is the last batch number handed out
//	│       └── <8-byte seq><4-byte n>   {"v":1,"at","n","spans":[...]}: one posted batch of n spans, byte for byte
//	├── experiments/                     perturbation experiments (added in schema 5)
//	│   └── <pipeline>/                  the bucket sequence is the last experiment ID handed out
//	│       └── <8-byte id>              {"v":1,"id","pipeline","at","report":{...}}: the report as the daemon serves it; the newest 50 kept
//	├── zonings/                         zoned pipelines' tuned precision maps (added in schema 6)
//	│   └── <pipeline>                   {"v":1,"pipeline","section","jobs","configs","tuned_at","result":{...}}: the daemon's state of it
//	├── reports/                         who reported that a certificate's config fails (added in schema 7)
//	│   └── <cert id>/<reporter>         {"v":1,"cert","job","key","reporter","source","error","reason","count","first","last"}; reporter "uid:N" or "node:ID"
//	└── fleet/                           fleet records this node verified (added in schema 7)
//	    ├── synced                       {"v":1,"synced"}: when the view was last in step with the fleet
//	    └── <fleet KV key>               {"v":1,"key","data":<base64 record bytes>,"at"}: an offer ("cert.…") or a revocation ("revoke.…")
//
// <jobkey> is JobKey.String(): kernel|spec hash|problem|device. <8-byte ...>
// keys are big-endian unsigned integers, so bbolt's byte order is numeric
// order. An observation's time is its At in Unix nanoseconds with the sign
// bit flipped (times before 1970 sort first; times outside the years
// 1678-2262 are clamped); the sequence after it keeps observations with the
// same time apart.
//
// Trials are append-only: a trial whose config key is already in keys/ is
// skipped, never overwritten; MarkTrial changes only the status and error of
// a stored one. Cycle IDs start at 1 for each job. A job is registered in
// jobs/ by the first write of any of its records, a certificate included.
//
// A certificate's body is opaque to the store: it comes back byte for byte,
// and a second put of the same id must bring the same bytes for the same
// job. Its metadata in certs/ never changes; a revocation is a separate
// record, written once, and Cert, Certs and JobCerts fill CertMeta's Job
// and revocation fields from the record and revocations/. Promote writes a
// certificate and the served record that names it in one transaction.
//
// # Schema changes
//
// The tree above is the current schema. Any change to it goes together with
// a new entry at the end of migrations (migrations.go), a test for that
// migration that builds the previous layout by hand, and an update of this
// section. Open runs the pending migrations in one Update transaction, in
// order, and writes the new version; a file written by a newer quasim
// (a version above len(migrations)) is refused with ErrSchemaTooNew.
//
//	version 1  the root bucket with specs, trials, policies, served, cycles and observations
//	version 2  the jobs bucket, backfilled from the job buckets of schema 1
//	version 3  the certs, revocations and jobcerts buckets, created empty
//	version 4  the spans bucket, created empty
//	version 5  the experiments bucket, created empty
//	version 6  the zonings bucket, created empty
//	version 7  the reports and fleet buckets, created empty
//
// # What a trial costs
//
// A trial's JSON is about 600 bytes when its config was timed 50 times
// (evaluate.Reps' most; fewer runs when the times agree early), field by
// field: times_ms 450 (each run in ms, 8 to 9 characters and a comma: a
// time.Duration in ns over 1e6 prints in at most 6 decimals), the field
// names and punctuation 80, at 32 (RFC 3339 with ns), cost_s 20, key 20 to
// 40, time_ms 10, status, cycle and v 15; GPU readings add 15 to 25 each
// where metered. In the file seq/ holds that and 24 bytes of key and
// element header, and keys/ about 70 bytes (the config key, the 8-byte
// number and a header). Appends to seq/ fill its pages to 95% (FillPercent;
// bbolt's default split left these append-only pages 47% full, 1.4 KB a
// trial of 50 runs); `go test ./internal/store -run '^$' -bench TrialBytes
// -benchtime 1x` measures it: 770 bytes of seq/ pages and 70 of keys/ per
// trial of 50 runs, 230 and 70 for 3 runs. The file itself grows in
// doubling steps, so its size overstates this up to twice.
//
// Lookups read a job's served record and the trials it names (ServedViews,
// through keys/), never the job's other trials; listings page them
// (TrialsAfter).
//
// # Damage, corrupt records and salvage
//
// Open checks an existing file before it opens it for writing, so a
// damaged file is never written to. First checkPages reads the file with
// plain reads, no bbolt code: both meta pages, the free list and every
// branch, leaf, overflow and inline page reachable from the root (in range,
// of the right type, referenced once, elements inside their page and in
// order, none sharing another's bytes, the file as long as its pages; so
// the walk reads each byte a bounded number of times, and a crafted file
// cannot make it exponential). bbolt trusts its pages, and on a damaged one it
// panics (a file truncated to 12 KB: "invalid freelist page"), faults on
// mmapped pages past the end of the file, loops on a page cycle or
// allocates without bound; so it only opens a file that passed. Then a
// read-only bbolt handle reads every key and value and decodes every record
// of the schema (behind recover and debug.SetPanicOnFault), and bbolt's
// tx.Check runs. The whole check is bounded by Options.CheckTimeout
// (default 20 s; a cut-short check is Report.Complete false and Open goes
// on). Damage is ErrDamaged, with what is wrong and how to salvage;
// CheckFile gives the same Report without opening for writing.
//
// A record that does not decode (a Corruption) costs that record only:
// Jobs, Specs, Trials, Cycles, Observations, Certs and JobCerts skip it,
// Served treats it as nothing served, and each is reported to
// Options.OnCorrupt (quasimd counts them in
// quasim_store_corrupt_records_total{bucket} and logs them, sampled). Reads
// of one named record (Spec, Cert, MarkTrial, ...) still return ErrCorrupt;
// so does Zoning (a pipeline's stored zoning), which also reports it
// (quasimd then tunes that pipeline again and overwrites the record).
//
// Salvage copies every readable record into a new file: it reads the
// damaged file page by page with the same walker, in a mode that skips bad
// pages instead of stopping (a page referenced twice is read once, so it
// cannot loop), under a shared lock, and never writes to it. A record is
// copied byte for byte under its key once it decodes; trial numbers, cycle
// IDs, bucket sequences and certificate ids stay; the indexes (trials'
// keys/, jobcerts/, jobs/) are rebuilt from what was copied. The report
// counts what was copied and lost per bucket, names each lost record, and
// lists the unreadable pages, whose records cannot be counted (the first
// 1,000, and how many more).
//
// # Retention
//
// A long-lived job must not grow the file without bound. NewCycle applies
// the job's retention in its transaction:
//
//   - cycles/<jobkey>/ keeps the newest Options.CyclesKept cycles (default
//     DefaultCyclesKept, 200: more than half a year of daily cycles); older
//     ones are deleted. Cycle IDs still come from the bucket sequence.
//   - trials keep every record (key, status, median time, energy, cost,
//     time, cycle: what resuming a search, warm starts, certification
//     candidates, `trials` and export need), but only the
//     Options.TrialTimesKept fastest ok trials (default
//     DefaultTrialTimesKept, 64) keep their repetition times (times_ms): a
//     certification of a replayed job reads them from its candidates, which
//     are the fastest. Trials that are not ok keep theirs.
//
// Negative values keep everything.
//
// spans/<pipeline>/ keeps the newest batches within the SpanRetention that
// AddSpans is given (the daemon passes the pipeline spec's retention:
// default 100,000 spans and 10,000 batches): AddSpans deletes the oldest
// batches beyond it in its transaction, counting spans from the keys alone
// (the 4-byte n), so the cost is one key per stored batch, not a decode.
// The newest batch is always kept.
//
// Policies are the strategies' own: they
// bound their step records (schedules.MaxSteps, quantumsearch.MaxSteps,
// 64 each); their histories hold one result per distinct config measured,
// bounded by the search space. No bucket changed its layout, so retention
// needs no migration.
//
// # Errors
//
// Reads of a job that was never written return empty results, not errors;
// Spec, PutCycle, Cert, Revoke and MarkTrial return ErrNotFound for what
// does not exist. A second process opening the same file waits
// Options.LockTimeout and then fails with ErrLocked. The sentinels are in errors.go; test them with errors.Is.
//
// This package has no compatibility promise outside quasim.
package store
