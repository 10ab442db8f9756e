package runtime

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

// Options configures a Client. Zero values take the defaults.
type Options struct {
	// Socket is quasimd's socket; empty tries client.Sockets() in order:
	// $QUASIM_SOCKET, else the user's own daemon, else the system service.
	Socket string
	// Timeout bounds a lookup that must ask the daemon when ctx has no
	// deadline (default 50ms).
	Timeout time.Duration
	// TTL is how long a cached answer is used before it is refreshed in
	// the background (default 10s); Watch keeps it fresh meanwhile.
	TTL time.Duration
	// Device names the device class to ask for; empty leaves it to the
	// daemon.
	Device string
	// OnFallback, when set, is called with the reason when a lookup
	// returns the caller's defaults because quasimd could not answer: once
	// for the first such lookup and once again for the first after quasimd
	// answered in between, so an application can log each outage once.
	// It runs on the goroutine of that Lookup and must not block.
	OnFallback func(reason string)
}

// Stats counts the lookups that returned the caller's defaults because
// quasimd could not answer (Stats.Fallbacks; Reason says why the last one
// did), so an application notices that it runs untuned.
type Stats struct {
	Fallbacks uint64
	Reason    string
}

// Result is the config to launch with.
type Result struct {
	// Config maps parameter names to values: the daemon's answer, or the
	// caller's defaults (the caller's own map, not a copy).
	Config map[string]any
	// Key is the config's canonical key; empty for the caller's defaults.
	Key string
	// Match is how the daemon found it (exact, nearest, default); empty
	// when Config is the caller's defaults.
	Match api.Match
	// Certificate is the id of the certificate behind the config, if any.
	Certificate string
	// FromProblem is, for a nearest match, the tuned problem used.
	FromProblem string
	// CertifiedFor is the problem Certificate was issued for: the problem
	// asked for only once the daemon verified the config there (see
	// api.Config.CertifiedFor).
	CertifiedFor string
	// Reason says why Config is the caller's defaults, or why a cached
	// answer could not be refreshed; empty otherwise.
	Reason string
	// Zones are the kernel's stages in zoned pipelines: the config and
	// precisions each pipeline's jointly tuned map gives it there (a
	// pipeline launching the kernel in that chain launches it so). Empty
	// for the caller's defaults. A launch in the chain reports its error
	// with ReportError at the stage's Problem and Key, as the stage's
	// Limit and Unit define it (api.ZoneStage).
	Zones []api.ZoneStage
}

// Client looks configs up. It is safe for concurrent use.
type Client struct {
	c   *client.Client
	opt Options

	mu      sync.Mutex                        // serialises writers of entries
	entries atomic.Pointer[map[string]*entry] // copied on write: lookups take no lock

	fallbacks atomic.Uint64
	lastWhy   atomic.Pointer[string]
	down      atomic.Bool // the last lookup that asked fell back
}

// entry is one cached answer. res and failed never change after the entry
// is published; stale is set by a timer, so lookups read no clock.
type entry struct {
	res        Result
	etag       string
	failed     bool // the daemon could not answer; res.Reason says why
	stale      atomic.Bool
	refreshing atomic.Bool
	timer      *time.Timer
}

// retryFailed is how long a failed first lookup is remembered, so that
// launches while the daemon is away do not each wait for it.
const retryFailed = time.Second

// New returns a Client; it connects lazily.
func New(opt Options) *Client {
	if opt.Timeout <= 0 {
		opt.Timeout = 50 * time.Millisecond
	}
	if opt.TTL <= 0 {
		opt.TTL = 10 * time.Second
	}
	c := &Client{c: &client.Client{Socket: opt.Socket}, opt: opt}
	c.entries.Store(&map[string]*entry{})
	return c
}

// appendKey appends the cache key of kernel at problem to b.
func appendKey(b []byte, kernel string, problem []int) []byte {
	b = append(b, kernel...)
	b = append(b, '|')
	for i, d := range problem {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return b
}

func problemString(problem []int) string {
	b := make([]byte, 0, 8*len(problem))
	for i, d := range problem {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(b)
}

// Lookup returns the config to launch kernel with at problem. A cached
// answer comes back at once (refreshed in the background once older than
// the TTL); otherwise it asks the daemon, within ctx's deadline or the
// Timeout. On any failure it returns defaults and the reason.
func (c *Client) Lookup(ctx context.Context, kernel string, problem []int, defaults map[string]any) Result {
	var buf [128]byte
	k := appendKey(buf[:0], kernel, problem)
	e := (*c.entries.Load())[string(k)]
	if e != nil && !e.stale.Load() {
		if e.failed {
			return c.fallback(defaults, e.res.Reason)
		}
		return e.res
	}
	key := string(k)
	if e != nil && !e.failed {
		if e.refreshing.CompareAndSwap(false, true) {
			go c.refresh(key, kernel, problem, e)
		}
		return e.res
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opt.Timeout)
		defer cancel()
	}
	res, err := c.fetch(ctx, key, kernel, problem)
	if err != nil {
		why := reason(err)
		c.store(key, &entry{res: Result{Reason: why}, failed: true}, retryFailed)
		return c.fallback(defaults, why)
	}
	return res
}

// fallback counts a lookup answered with the caller's defaults, and tells
// OnFallback at the start of an outage.
func (c *Client) fallback(defaults map[string]any, why string) Result {
	c.fallbacks.Add(1)
	if p := c.lastWhy.Load(); p == nil || *p != why {
		c.lastWhy.Store(&why)
	}
	if !c.down.Load() && c.down.CompareAndSwap(false, true) && c.opt.OnFallback != nil {
		c.opt.OnFallback(why)
	}
	return Result{Config: defaults, Reason: why}
}

// Stats returns how many lookups fell back to the caller's defaults, and
// why the last one did.
func (c *Client) Stats() Stats {
	st := Stats{Fallbacks: c.fallbacks.Load()}
	if p := c.lastWhy.Load(); p != nil {
		st.Reason = *p
	}
	return st
}

// fetch asks the daemon and caches the answer.
func (c *Client) fetch(ctx context.Context, key, kernel string, problem []int) (Result, error) {
	cfg, etag, _, err := c.c.WatchConfig(ctx, kernel, problemString(problem), c.opt.Device, "", 0)
	if err != nil {
		return Result{}, err
	}
	res := fromAPI(cfg)
	c.store(key, &entry{res: res, etag: etag}, c.opt.TTL)
	if c.down.Load() {
		c.down.Store(false)
	}
	return res, nil
}

// store publishes e under key; it turns stale after ttl.
func (c *Client) store(key string, e *entry, ttl time.Duration) {
	e.timer = time.AfterFunc(ttl, func() { e.stale.Store(true) })
	c.mu.Lock()
	old := *c.entries.Load()
	next := make(map[string]*entry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if prev := next[key]; prev != nil {
		prev.timer.Stop()
	}
	next[key] = e
	c.entries.Store(&next)
	c.mu.Unlock()
}

// drop forgets the answer cached under key.
func (c *Client) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.entries.Load()
	prev, ok := old[key]
	if !ok {
		return
	}
	prev.timer.Stop()
	next := make(map[string]*entry, len(old))
	for k, v := range old {
		if k != key {
			next[k] = v
		}
	}
	c.entries.Store(&next)
}

// refresh renews a stale entry without making a launch wait; when the
// daemon does not answer, the old answer stays, saying why, for another
// TTL.
func (c *Client) refresh(key, kernel string, problem []int, e *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*c.opt.Timeout)
	defer cancel()
	if _, err := c.fetch(ctx, key, kernel, problem); err != nil {
		res := e.res
		res.Reason = "stale: " + reason(err)
		c.store(key, &entry{res: res, etag: e.etag}, c.opt.TTL)
	}
}

func fromAPI(cfg api.Config) Result {
	return Result{Config: cfg.Config, Key: cfg.Key, Match: cfg.Match, Certificate: cfg.Certificate, FromProblem: cfg.From, CertifiedFor: cfg.CertifiedFor, Zones: cfg.Zones}
}

func reason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "quasimd did not answer within the deadline"
	case errors.Is(err, api.ErrUnavailable):
		return "quasimd unavailable: " + err.Error()
	}
	return err.Error()
}

// Watch keeps kernel's config at problem fresh until ctx is done: it
// long-polls the daemon, updates the cache Lookup answers from, and calls
// fn (when not nil) with each new answer, the first one included. Errors
// are retried with backoff; Watch returns ctx's error.
func (c *Client) Watch(ctx context.Context, kernel string, problem []int, fn func(Result)) error {
	key := string(appendKey(nil, kernel, problem))
	ps := problemString(problem)
	etag := ""
	backoff := 100 * time.Millisecond
	for {
		cfg, tag, changed, err := c.c.WatchConfig(ctx, kernel, ps, c.opt.Device, etag, 30*time.Second)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if !changed {
			c.touch(key)
			continue
		}
		etag = tag
		res := fromAPI(cfg)
		c.store(key, &entry{res: res, etag: tag}, c.opt.TTL)
		if fn != nil {
			fn(res)
		}
	}
}

// touch marks an entry as just confirmed by the daemon.
func (c *Client) touch(key string) {
	if e := (*c.entries.Load())[key]; e != nil && !e.failed {
		c.store(key, &entry{res: e.res, etag: e.etag}, c.opt.TTL)
	}
}

// Report sends latencies a launch of kernel at problem with config key
// measured, in ms, so that quasimd can see drift from the certified
// latency. Any local user may report, for jobs that exist (else an error
// wrapping api.ErrNotFound names the job), at a rate quasimd limits per
// uid (api.ErrRateLimited past it; by default 10 reports a second, bursts
// of 200).
func (c *Client) Report(ctx context.Context, kernel string, problem []int, key string, latenciesMS []float64) error {
	_, err := c.ReportError(ctx, kernel, problem, key, latenciesMS, 0)
	return err
}

// ReportError is Report with the error the launch's output showed against
// a reference the caller computed on a sample of its inputs, in the unit
// of the job's error budget (relative for verify.error_budget.rel), 0 when
// not checked. One above the bound the config's certificate records makes
// quasimd revoke that certificate, answer another config (its next
// certified one, or the default) and re-tune; revoked says it did, and
// the cached answer for kernel at problem is dropped, so the next Lookup
// asks quasimd.
func (c *Client) ReportError(ctx context.Context, kernel string, problem []int, key string, latenciesMS []float64, observedErr float64) (revoked bool, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*c.opt.Timeout)
		defer cancel()
	}
	resp, err := c.c.Observe(ctx, api.ObservationsRequest{Observations: []api.Observation{{
		Kernel: kernel, Problem: problemString(problem), Device: c.opt.Device, Key: key, LatenciesMS: latenciesMS, Source: "runtime",
		Error: observedErr,
	}}})
	if err != nil || len(resp.Revoked) == 0 {
		return false, err
	}
	var buf [128]byte
	c.drop(string(appendKey(buf[:0], kernel, problem)))
	return true, nil
}
