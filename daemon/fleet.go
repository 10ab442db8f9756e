package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/tuner"
)

// DefaultFleetTrustDir holds the public keys whose certificates a fleet
// node serves.
const DefaultFleetTrustDir = fleet.DefaultTrustDir

// FleetConfig joins the daemon to a fleet (package fleet). No URLs: no
// fleet, and no network use at all.
type FleetConfig struct {
	URLs     []string // NATS servers
	Name     string   // the fleet's name
	TrustDir string   // *.pub keys whose certificates are served (default DefaultFleetTrustDir)
	Replicas int      // replicas of the bucket and stream, if this node creates them
	// Wait is how long a job with nothing served waits for a fleet offer
	// before its first cycle here; 0 tunes at once unless the fleet has
	// an offer already.
	Wait time.Duration

	CredsFile, NkeyFile    string // NATS credentials
	TLSCA, TLSCert, TLSKey string // TLS to the servers
}

func (c *FleetConfig) validate() error {
	if len(c.URLs) == 0 {
		if c.Name != "" {
			return fmt.Errorf("fleet-name %q: needs --fleet (the NATS servers)", c.Name)
		}
		return nil
	}
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("fleet-name: required with --fleet"))
	} else if err := fleet.CheckName(c.Name); err != nil {
		errs = append(errs, fmt.Errorf("fleet-name: %w", err))
	}
	for _, u := range c.URLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "nats" && p.Scheme != "tls") || p.Host == "" {
			errs = append(errs, fmt.Errorf("fleet %q: want nats://HOST:PORT or tls://HOST:PORT", u))
		}
	}
	if c.Wait < 0 {
		errs = append(errs, fmt.Errorf("fleet-wait %s: must not be negative", c.Wait))
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("fleet-replicas %d: want 1 to 5", c.Replicas))
	}
	return errors.Join(errs...)
}

// fleetNode joins the daemon to its fleet: it publishes what the daemon
// promotes and revokes, serves trusted fleet configs for jobs the daemon
// has not tuned (fleetAnswer), and verifies each here before calling it
// verified; a config that fails here is recorded (a wrong_result trial,
// as for a nearest answer), never served again by this node, and the
// failure is published.
type fleetNode struct {
	cl    *fleet.Client
	sched *scheduler
	st    *store.Store
	log   zerolog.Logger
	wait  time.Duration
	trust string // the trust directory

	mu        sync.Mutex
	local     map[store.JobKey]bool // jobs whose served config or certs may have changed here
	remote    map[store.JobKey]bool // jobs whose fleet offers changed
	published map[store.JobKey]string
	revoked   map[string]bool // revocations published
	pending   map[checkKey]bool
	queue     []fleetCheck
	wake      chan struct{}
	checks    chan struct{}
	running   bool                       // run has started: verifications may be queued
	deferred  map[store.JobKey]time.Time // jobs whose first cycle waits for the fleet, with when the wait ends
	replacing map[store.JobKey]time.Time // deferred jobs whose fleet config went, waiting until then for another
	fromFleet map[store.JobKey]bool      // jobs whose last answer came from the fleet
	contrib   map[string]int             // kernel|device -> trials in the last contribution published
	verified  int                        // fleet configs verified here
	failed    int                        // fleet configs that failed here
	failures  []fleet.Failure            // other nodes' failure reports waiting (fleet_reports.go)

	syncedKept time.Time // the view's last time in step, as last written (run's goroutine only)
}

type fleetCheck struct {
	checkKey
	cert    string // the fleet certificate it verifies
	nearest bool   // certified at another problem: a failure here is not the certificate's
}

// maxFleetQueue bounds the fleet configs waiting for local verification.
const maxFleetQueue = 64

// newFleetNode returns nil when cfg names no fleet.
func newFleetNode(cfg FleetConfig, key ed25519.PrivateKey, sched *scheduler, st *store.Store, log zerolog.Logger) (*fleetNode, error) {
	if len(cfg.URLs) == 0 {
		return nil, nil
	}
	dir := cfg.TrustDir
	if dir == "" {
		dir = fleet.DefaultTrustDir
	}
	keys, err := fleet.LoadTrustDir(dir)
	if err != nil {
		return nil, err
	}
	f := &fleetNode{
		sched: sched, st: st, log: log, wait: cfg.Wait, trust: dir, deferred: map[store.JobKey]time.Time{}, replacing: map[store.JobKey]time.Time{}, fromFleet: map[store.JobKey]bool{}, contrib: map[string]int{},
		local: map[store.JobKey]bool{}, remote: map[store.JobKey]bool{}, published: map[store.JobKey]string{},
		revoked: map[string]bool{}, pending: map[checkKey]bool{},
		wake: make(chan struct{}, 1), checks: make(chan struct{}, 1),
	}
	f.cl, err = fleet.New(fleet.Config{
		URLs: cfg.URLs, Name: cfg.Name, Key: key, Trust: fleet.NewTrust(keys...), Replicas: cfg.Replicas,
		CredsFile: cfg.CredsFile, NkeyFile: cfg.NkeyFile, TLSCA: cfg.TLSCA, TLSCert: cfg.TLSCert, TLSKey: cfg.TLSKey,
		OnChange: f.remoteChanged, OnFailure: f.failureReported, OnRecord: f.record, Log: log,
	})
	if err != nil {
		return nil, err
	}
	f.restore()
	log.Info().Str("fleet", cfg.Name).Int("trusted_keys", len(keys)).Str("trust_dir", dir).Msg("fleet configured")
	return f, nil
}

func jobKeyOf(j fleet.JobID) store.JobKey {
	return store.JobKey{Kernel: j.Kernel, SpecHash: j.SpecHash, Problem: j.Problem, Device: j.Device}
}

func fleetJobOf(k store.JobKey) fleet.JobID {
	return fleet.JobID{Kernel: k.Kernel, SpecHash: k.SpecHash, Problem: k.Problem, Device: k.Device}
}

func (f *fleetNode) poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// localChanged is told of the jobs whose records changed here.
func (f *fleetNode) localChanged(jobs ...store.JobKey) {
	f.mu.Lock()
	for _, j := range jobs {
		f.local[j] = true
	}
	f.mu.Unlock()
	f.poke(f.wake)
}

// remoteChanged is told of a job whose fleet offers changed.
func (f *fleetNode) remoteChanged(j fleet.JobID) {
	f.mu.Lock()
	f.remote[jobKeyOf(j)] = true
	f.mu.Unlock()
	f.poke(f.wake)
}

// run publishes and verifies until ctx is done.
func (f *fleetNode) run(ctx context.Context, srv *server) error {
	jobs, err := f.st.Jobs()
	if err != nil {
		return fmt.Errorf("fleet: list jobs: %w", err)
	}
	f.localChanged(jobs...) // what was promoted while away
	f.mu.Lock()
	f.running = true
	f.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := f.cl.Run(ctx); err != nil {
			f.log.Error().Err(err).Msg("fleet stopped; serving and tuning go on without it")
		}
	})
	wg.Go(func() { f.verifyLoop(ctx) })
	sync := time.NewTicker(fleetSyncEvery)
	defer sync.Stop()
	for {
		select {
		case <-ctx.Done():
			f.keepSynced()
			wg.Wait()
			return nil
		case <-sync.C:
			f.keepSynced()
			continue
		case <-f.wake:
		}
		f.mu.Lock()
		local, remote, failures := f.local, f.remote, f.failures
		f.local, f.remote, f.failures = map[store.JobKey]bool{}, map[store.JobKey]bool{}, nil
		f.mu.Unlock()
		for _, fl := range failures {
			if err := srv.fleetFailure(fl, time.Now()); err != nil {
				f.log.Error().Err(err).Str("cert", fl.Cert).Msg("fleet: failure report")
			}
		}
		for j := range local {
			if err := f.publishJob(j); err != nil {
				f.log.Error().Err(err).Str("job_id", j.String()).Msg("fleet: publish")
			}
		}
		for j := range remote {
			f.offered(srv, j)
		}
	}
}

// publishJob offers job's served certificate, if the fleet has not had it,
// and the revocations of its certificates.
func (f *fleetNode) publishJob(job store.JobKey) error {
	sv, ok, err := f.st.Served(job)
	if err != nil {
		return err
	}
	if ok {
		f.served(job, false) // its own now
	}
	if ok && sv.Certificate != "" && f.published[job] != sv.Certificate {
		body, meta, err := f.st.Cert(sv.Certificate)
		if err != nil {
			return err
		}
		if !meta.Revoked {
			// A certificate of another issuer (imported) is not ours to offer.
			if err := f.cl.PublishCert(body); err != nil {
				f.log.Debug().Err(err).Str("cert", sv.Certificate).Msg("fleet: certificate not offered")
			} else {
				f.log.Info().Str("job_id", job.String()).Str("cert", sv.Certificate).Str("config", sv.Key).Msg("fleet: promotion published")
			}
			f.published[job] = sv.Certificate
		}
	}
	if err := f.contribute(job.Kernel, job.Device); err != nil {
		return err
	}
	metas, err := f.st.JobCerts(job)
	if err != nil {
		return err
	}
	for _, m := range metas {
		if m.Revoked && !f.revoked[m.ID] {
			f.cl.PublishRevocation(m.ID, m.Reason, m.RevokedAt)
			f.revoked[m.ID] = true
		}
	}
	return nil
}

// deferStart says whether job j, which the scheduler would start a first
// cycle of, waits for the fleet instead: when it has nothing served here
// and the fleet offers a config for it (or offers kept from the last run
// wait for the fleet's replay), or, for cfg.Wait, while the fleet may
// still offer one. A deferred job gets its cycle when the wait ends
// with nothing served, or when the fleet's configs all fail here or go.
// Called under the scheduler's lock.
func (f *fleetNode) deferStart(j *job) bool {
	if _, served, err := f.st.Served(j.key); err != nil || served {
		return false
	}
	if len(f.cl.Offers(fleetJobOf(j.key))) == 0 && f.wait <= 0 && !f.cl.Holding(fleetJobOf(j.key)) {
		return false
	}
	f.mu.Lock()
	f.deferred[j.key] = time.Now().Add(f.wait)
	f.mu.Unlock()
	f.log.Info().Str("job_id", j.key.String()).Dur("wait", f.wait).Msg("first cycle waits for the fleet")
	if f.wait > 0 {
		time.AfterFunc(f.wait, func() { f.remoteChanged(fleetJobOf(j.key)) })
	}
	return true
}

// startDeferred starts the first cycle of a deferred job that serves
// nothing and has no fleet config to serve.
func (f *fleetNode) startDeferred(key store.JobKey, why string) {
	f.mu.Lock()
	_, was := f.deferred[key]
	delete(f.deferred, key)
	f.mu.Unlock()
	if !was {
		return
	}
	f.log.Info().Str("job_id", key.String()).Str("why", why).Msg("fleet: tuning here")
	if err := f.sched.trigger(key.String(), runRequest{trigger: "start"}); err != nil && !errors.Is(err, errStopping) {
		f.log.Warn().Err(err).Str("job_id", key.String()).Msg("fleet: first cycle not started")
	}
}

// contribute publishes this node's contribution to the fleet's aggregate
// of kernel on device class dev (fleet.Contribute over every stored job
// of theirs), when its trials changed since the last one.
func (f *fleetNode) contribute(kernel, dev string) error {
	keys, err := f.st.Jobs()
	if err != nil {
		return err
	}
	var ms []fleet.Measured
	for _, k := range keys {
		if k.Kernel != kernel || k.Device != dev {
			continue
		}
		trials, err := f.st.Trials(k)
		if err != nil {
			return err
		}
		for _, tr := range trials {
			ms = append(ms, fleet.Measured{Problem: k.Problem, Key: tr.Key, OK: tr.Status == string(evaluate.StatusOK), TimeMS: tr.TimeMS})
		}
	}
	id := kernel + "|" + dev
	if len(ms) == 0 || f.contrib[id] == len(ms) {
		return nil
	}
	f.contrib[id] = len(ms)
	f.cl.PublishContribution(fleet.Contribute(kernel, dev, ms))
	return nil
}

// offered is told that the fleet's offers of job changed: the lookups'
// cache of it goes, and a job this daemon tunes but serves nothing for
// gets the best offer verified here at once.
func (f *fleetNode) offered(srv *server, key store.JobKey) {
	f.sched.changed(key)
	j := f.sched.jobOf(key)
	if j == nil {
		return
	}
	if _, served, err := f.st.Served(key); err != nil || served {
		return
	}
	f.mu.Lock()
	had := f.fromFleet[key] // fleetAnswer forgets it when nothing is left
	f.mu.Unlock()
	c, ok, err := srv.fleetAnswer(j, key.Problem)
	switch {
	case err != nil:
		f.log.Error().Err(err).Str("job_id", key.String()).Msg("fleet: offer")
	case ok:
		f.mu.Lock()
		delete(f.replacing, key)
		f.mu.Unlock()
		f.log.Info().Str("job_id", key.String()).Str("cert", c.Certificate).Str("issuer", c.Issuer).Msg("fleet: serving a fleet config")
	case f.awaitReplacement(key, had):
	case f.firstWait(key):
	case f.cl.Holding(fleetJobOf(key)):
		// Offers kept from the last run wait for the fleet to replay
		// them; OnChange tells again once they are live or gone.
	default:
		f.startDeferred(key, "no fleet config to serve")
	}
}

// awaitReplacement reports whether a deferred job whose fleet config was
// revoked (had: it served one until now, and the fleet offers nothing
// now) waits for another: up to cfg.Wait from then, as at its start. One
// whose fleet configs are offered but failed here tunes at once. An issuer that revokes a config re-certifies its
// successor soon after, and a follower that tuned for itself meanwhile
// would serve its own config from then on, apart from the fleet.
func (f *fleetNode) awaitReplacement(key store.JobKey, had bool) bool {
	if f.wait <= 0 || len(f.cl.Offers(fleetJobOf(key))) > 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.deferred[key]; !ok {
		return false
	}
	until, waiting := f.replacing[key]
	switch {
	case !waiting && !had:
		return false
	case !waiting:
		f.replacing[key] = time.Now().Add(f.wait)
		f.log.Info().Str("job_id", key.String()).Dur("wait", f.wait).Msg("fleet: config gone, waiting for another")
		time.AfterFunc(f.wait, func() { f.remoteChanged(fleetJobOf(key)) })
		return true
	case time.Now().Before(until):
		return true
	}
	delete(f.replacing, key)
	return false
}

// firstWait says a deferred job that the fleet has offered nothing yet
// still waits for its first offer: cfg.Wait from its start has not passed.
func (f *fleetNode) firstWait(key store.JobKey) bool {
	if len(f.cl.Offers(fleetJobOf(key))) > 0 {
		return false // offered, and failed here: tune at once
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	until, ok := f.deferred[key]
	return ok && time.Now().Before(until)
}

// reloadTrust reads the trust directory again (on SIGHUP or POST
// /v1/reload); a directory that no longer reads keeps the keys trusted
// before.
func (f *fleetNode) reloadTrust() {
	keys, err := fleet.LoadTrustDir(f.trust)
	if err != nil {
		f.log.Error().Err(err).Msg("fleet trust not reloaded; the keys trusted before stay")
		return
	}
	f.cl.SetTrust(fleet.NewTrust(keys...))
	f.log.Info().Int("trusted_keys", len(keys)).Str("trust_dir", f.trust).Msg("fleet trust reloaded")
}

// jobOf is the loaded job key names, or nil.
func (s *scheduler) jobOf(key store.JobKey) *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.jobs[key.String()]; j != nil && j.key == key && !j.foreign {
		return j
	}
	return nil
}

// fleetAnswer answers job j, which serves nothing of its own, with the
// best trusted fleet config of its spec version and device class that has
// not failed here; ok is false when there is none. A config not verified
// here yet is queued for verification.
func (s *server) fleetAnswer(j *job, problem string) (c api.Config, ok bool, err error) {
	f := s.fleet
	if f == nil || j.foreign {
		return c, false, nil
	}
	for _, o := range f.cl.Offers(fleetJobOf(j.key)) {
		cfg, err := j.spec.Space.ParseKey(o.Cert.Key)
		if err == nil {
			err = j.spec.Space.Check(cfg)
		}
		if err != nil {
			continue // not a config of this node's space: nothing to serve
		}
		passed, why, err := s.checkedAt(j.key, o.Cert.Key)
		if err != nil {
			return c, false, err
		}
		if why != "" {
			continue // failed here: never served by this node
		}
		if why, err = s.fleetRefused(o.Cert.ID, time.Now()); err != nil {
			return c, false, err
		} else if why != "" {
			continue // a quorum of nodes reported it failed
		}
		c = api.Config{
			Kernel: j.key.Kernel, Problem: problem, Device: j.key.Device, Config: j.spec.Space.WireConfigMap(cfg),
			Key: o.Cert.Key, Match: api.MatchExact, TimeMS: o.Cert.Latency.MedianMS, Certificate: o.Cert.ID,
			CertifiedFor: o.Cert.Job.Problem, SpecHash: j.key.SpecHash, Source: api.SourceFleet, Issuer: o.Cert.Issuer,
		}
		if passed != nil {
			c.Verification = api.VerifyPassed
		} else {
			c.Verification = f.queueCheck(j, o.Cert)
		}
		f.served(j.key, true)
		return c, true, nil
	}
	f.served(j.key, false)
	return c, false, nil
}

// waiting says job's first cycle waits for the fleet (deferStart).
func (f *fleetNode) waiting(job store.JobKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.deferred[job]
	return ok
}

// served notes whether job's answer comes from the fleet.
func (f *fleetNode) served(job store.JobKey, fromFleet bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fromFleet {
		f.fromFleet[job] = true
	} else {
		delete(f.fromFleet, job)
	}
}

// queueCheck queues the verification here of cert's config for job j and
// returns the answer's Verification.
func (f *fleetNode) queueCheck(j *job, cert *certs.Certificate) string {
	return f.queue1(fleetCheck{checkKey: checkKey{job: j.key, key: cert.Key}, cert: cert.ID, nearest: cert.Job.Problem != j.key.Problem}, j)
}

func (f *fleetNode) queue1(fc fleetCheck, j *job) string {
	if _, ok := j.spec.Evaluator.(evaluate.Verifier); !ok {
		return api.VerifyRefused + fmt.Sprintf("evaluator %q has no outputs to check", j.kern.spec.Evaluator)
	}
	ck := fc.checkKey
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.pending[ck]:
		return api.VerifyPending
	case !f.running:
		return api.VerifyRefused + errNotRunning.Error()
	case len(f.queue) >= maxFleetQueue:
		return api.VerifyRefused + fmt.Sprintf("%d fleet configs wait for verification, the most", len(f.queue))
	}
	f.pending[ck] = true
	f.queue = append(f.queue, fc)
	f.poke(f.checks)
	return api.VerifyPending
}

// verifyLoop verifies queued fleet configs one at a time.
func (f *fleetNode) verifyLoop(ctx context.Context) {
	for {
		f.mu.Lock()
		if len(f.queue) == 0 {
			f.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-f.checks:
				continue
			}
		}
		fc := f.queue[0]
		f.queue = f.queue[1:]
		f.mu.Unlock()
		f.verify(ctx, fc)
		f.mu.Lock()
		delete(f.pending, fc.checkKey)
		f.mu.Unlock()
		f.sched.changed(fc.job)
		if !fc.nearest {
			f.remoteChanged(fleetJobOf(fc.job)) // a failed config: the next offer, or a cycle here
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// verify verifies fc's config at its job here, as a nearest answer's is
// (tuner.VerifyAt): passed, it is certified here too; failed, it is
// recorded wrong_result here and the failure is published.
func (f *fleetNode) verify(ctx context.Context, fc fleetCheck) {
	log := f.log.With().Str("job_id", fc.job.String()).Str("config", fc.key).Str("fleet_cert", fc.cert).Logger()
	j := f.sched.jobOf(fc.job)
	if j == nil {
		return
	}
	dims, err := j.kern.parseProblem(fc.job.Problem)
	if err != nil {
		log.Warn().Err(err).Msg("fleet config: cannot verify")
		return
	}
	sj, err := j.kern.spec.JobFor(dims)
	if err != nil {
		log.Warn().Err(err).Msg("fleet config: cannot verify")
		return
	}
	if c, ok := sj.Evaluator.(io.Closer); ok {
		defer c.Close()
	}
	v, err := f.sched.tn.VerifyAt(ctx, tunerJob(j.kern.spec, fc.job, sj), fc.key)
	switch {
	case errors.Is(err, context.Canceled):
		log.Info().Msg("fleet config verification cancelled")
	case err != nil:
		log.Error().Err(err).Msg("fleet config verification failed to run")
	case v.Passed:
		msg := "fleet config verified on this node"
		if fc.nearest {
			msg = "fleet config of another problem verified at this one"
		}
		log.Info().Str("cert", v.Cert).Float64("time_ms", v.TimeMS).Msg(msg)
		f.mu.Lock()
		f.verified++
		f.mu.Unlock()
	case fc.nearest:
		// Failed at a problem it was not certified for: not answered here
		// at this problem again, and nothing against the certificate.
		log.Info().Str("failed", v.Why).Msg("fleet config of another problem failed verification at this one; not answered here")
	default:
		f.mu.Lock()
		f.failed++
		f.mu.Unlock()
		log.Warn().Str("failed", v.Why).Msg("fleet config failed verification on this node; not served here, failure published")
		f.cl.PublishFailure(fc.cert, v.Why)
	}
}

// getFleet is GET /v1/fleet.
func (s *server) getFleet(*http.Request) (any, error) {
	f := s.fleet
	if f == nil {
		return api.FleetStatus{}, nil
	}
	st := f.cl.Status()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := api.FleetStatus{
		Enabled: true, Fleet: st.Fleet, Node: st.Node, Connected: st.Connected, Trusted: st.Trusted,
		Peers: st.Peers, Received: st.Offers, ServedFromFleet: len(f.fromFleet), Verified: f.verified,
		VerifyFailures: f.failed, Published: st.Published, Waiting: st.Waiting,
		Live: st.Live, Restored: st.Restored,
	}
	if !st.Synced.IsZero() {
		at := st.Synced.UTC()
		out.Synced = &at
		if !st.Live {
			out.ViewAgeS = time.Since(at).Seconds()
		}
	}
	r := st.Rejected
	if n := r.Untrusted + r.Tampered + r.Malformed + r.NotPassed; n > 0 {
		out.Rejected = map[string]int{"untrusted": r.Untrusted, "tampered": r.Tampered, "malformed": r.Malformed, "not_passed": r.NotPassed}
	}
	return out, nil
}

// measured publishes a trial a cycle measured, anonymised: its config,
// status, median time and energy, and the node's salted id; no
// repetitions, no host, no error text.
func (f *fleetNode) measured(job tuner.Job, tr evaluate.Trial) {
	s := fleet.Summary{Job: fleetJobOf(job.Key), Key: tr.Key, Status: string(tr.Status), TimeMS: tr.Time}
	if tr.EnergyMJ > 0 {
		e := tr.EnergyMJ
		s.EnergyMJ = &e
	}
	f.cl.PublishSummary(s)
}

// related is the tuner's Related hook: the other nodes' trials of job's
// kernel, one source per node, device class and problem, for warm starts.
func (f *fleetNode) related(job tuner.Job) map[string][]store.Trial {
	out := map[string][]store.Trial{}
	for _, s := range f.cl.Summaries(job.Key.Kernel) {
		name := "fleet:" + s.Node[:min(8, len(s.Node))] + "|" + s.Job.Problem + "|" + s.Job.Device
		tr := store.Trial{Key: s.Key, Status: s.Status, TimeMS: s.TimeMS}
		if s.EnergyMJ != nil {
			tr.EnergyMJ = *s.EnergyMJ
		}
		out[name] = append(out[name], tr)
	}
	// The aggregate ranks without anyone's raw trials: a quantile is a
	// time to rank by (1 + quantile, so that none is zero).
	ranked, nodes := f.cl.Aggregate(job.Key.Kernel, job.Key.Device)
	for _, r := range ranked {
		name := fmt.Sprintf("fleet-aggregate|%s|%d nodes", job.Key.Device, nodes)
		out[name] = append(out[name], store.Trial{Key: r.Key, Status: string(evaluate.StatusOK), TimeMS: 1 + r.Quantile})
	}
	return out
}
