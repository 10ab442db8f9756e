package fleet

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/certs"
)

// Config configures a fleet client.
type Config struct {
	URLs     []string           // NATS servers, nats:// or tls://
	Name     string             // the fleet; scopes the bucket and the stream
	Key      ed25519.PrivateKey // the node's issuer key: signs revocations and failure reports
	Trust    *Trust             // keys whose certificates are served; the node's own is added
	Replicas int                // replicas of the bucket and stream the node creates (default 1)

	CredsFile string // NATS credentials file (JWT and nkey seed)
	NkeyFile  string // NATS nkey seed file
	TLSCA     string // CA file of the servers' certificates
	TLSCert   string // client certificate and key, for mutual TLS
	TLSKey    string

	// OnChange is told of a job whose offers changed; it runs on the
	// watch goroutine and must not block long.
	OnChange func(JobID)
	// OnFailure is told of each verified failure report of another node;
	// it runs on the watch goroutine and must not block long.
	OnFailure func(Failure)
	// OnRecord is told of each offer or revocation the view took (data
	// as the bucket holds it), and of each offer deleted, so that a node
	// can keep what it verified (Restore); it runs on the watch goroutine.
	OnRecord func(key string, data []byte, deleted bool)
	Log      zerolog.Logger
	Now      func() time.Time
}

// Client is a node's connection to its fleet. Publishing never blocks:
// records wait in an outbox while the fleet is out of reach and go out
// when it is back.
type Client struct {
	cfg Config
	log zerolog.Logger // sampled: for records from the network

	mu        sync.Mutex
	view      *View
	out       map[string]pending   // by what the record is of; the latest wins
	gen       uint64               // numbers the outbox's records
	summaries []Summary            // waiting to be published
	received  map[string][]Summary // other nodes' summaries by kernel, oldest first
	dropped   int                  // summaries dropped from a full outbox
	node      string
	connected bool
	live      bool              // the watch is in step with the bucket
	synced    time.Time         // when the view was last in step
	restored  int               // records taken from Restore
	stale     map[string]bool   // restored offers the bucket has not replayed yet
	holding   bool              // restored offers are held back (HoldRestored)
	held      map[string]bool   // the restored offers' keys, hidden while holding: until the replay's end, not each key's own
	raw       map[string][]byte // every record the view was given, trusted or not, by key (SetTrust reads them again)
	published int
	kick      chan struct{} // the outbox has something new, or the connection is back
	rewatch   chan struct{} // the connection is back: watch again
	ready     chan struct{}
}

// maxSummaries bounds the summaries waiting for the fleet.
const maxSummaries = 10000

// attempt bounds one request to the servers: a request sent before the
// cluster has a meta leader waits for its context, so it is retried.
const attempt = 2 * time.Second

// New returns a client of cfg; Run connects it.
func New(cfg Config) (*Client, error) {
	if err := CheckName(cfg.Name); err != nil {
		return nil, err
	}
	if len(cfg.URLs) == 0 {
		return nil, errors.New("fleet: no server URL")
	}
	if len(cfg.Key) != ed25519.PrivateKeySize {
		panic("fleet: no key")
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	own := cfg.Key.Public().(ed25519.PublicKey)
	t := NewTrust(own)
	if cfg.Trust != nil {
		for id, k := range cfg.Trust.keys {
			t.keys[id] = k
		}
	}
	cfg.Trust = t
	return &Client{
		cfg: cfg, log: cfg.Log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Minute}),
		view: NewView(t), out: map[string]pending{}, received: map[string][]Summary{}, raw: map[string][]byte{},
		kick: make(chan struct{}, 1), rewatch: make(chan struct{}, 1), ready: make(chan struct{}),
	}, nil
}

// Ready is closed once the client has joined the fleet and read every
// record stored before it did.
func (c *Client) Ready() <-chan struct{} { return c.ready }

// NodeID is this node's salted id in the fleet, "" before it joined.
func (c *Client) NodeID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node
}

// nodeID derives a node's id from the fleet's salt and its key: the
// first 32 hex digits of SHA-256(salt || SHA-256(label || seed)). Without
// the key nobody can tell which node an id is; without the salt the ids
// of one node in two fleets cannot be linked.
func nodeID(salt []byte, key ed25519.PrivateKey) string {
	inner := sha256.Sum256(append([]byte("quasim fleet node id\x00"), key.Seed()...))
	outer := sha256.Sum256(append(append([]byte{}, salt...), inner[:]...))
	return hex.EncodeToString(outer[:16])
}

func (c *Client) options() ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name("quasimd"),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(attempt),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			c.setConnected(false)
			go c.release("fleet disconnected")
			c.cfg.Log.Warn().Err(err).Msg("fleet disconnected; serving and tuning go on")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.setConnected(true)
			c.cfg.Log.Info().Msg("fleet reconnected")
			c.poke()
			select {
			case c.rewatch <- struct{}{}:
			default:
			}
		}),
	}
	if c.cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(c.cfg.CredsFile))
	}
	if c.cfg.NkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(c.cfg.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("fleet nkey %s: %w", c.cfg.NkeyFile, err)
		}
		opts = append(opts, o)
	}
	if c.cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.cfg.TLSCA))
	}
	if c.cfg.TLSCert != "" || c.cfg.TLSKey != "" {
		opts = append(opts, nats.ClientCert(c.cfg.TLSCert, c.cfg.TLSKey))
	}
	return opts, nil
}

func (c *Client) setConnected(v bool) {
	c.mu.Lock()
	c.connected = v
	if !v {
		c.live = false
	}
	c.mu.Unlock()
}

// inStep notes that the view is in step with the bucket now (live), or
// no longer.
func (c *Client) inStep(live bool) {
	c.mu.Lock()
	c.live = live
	if live {
		c.synced = c.cfg.Now()
	}
	c.mu.Unlock()
}

// Record is a record of the fleet's bucket, as it held it.
type Record struct {
	Key  string
	Data []byte
}

// Restore takes records kept from an earlier run (OnRecord) into the view,
// each verified again under the current trust as the watch would, and
// synced as when that view was last in step with the fleet; call it
// before Run. It returns how many records the view took.
//
// The restored offers are held back (not live) until the bucket replays
// them, for at most HoldRestored: a node restored from an old backup
// must not serve what the fleet revoked since. They are released at once
// when the fleet turns out to be out of reach (the first connection
// fails, or the connection drops), so a node restarted without its fleet
// serves what it had verified.
func (c *Client) Restore(recs []Record, synced time.Time) int {
	c.mu.Lock()
	n := 0
	var jobs []JobID
	for _, r := range recs {
		if !strings.HasPrefix(r.Key, prefixCert) && !strings.HasPrefix(r.Key, prefixRevoke) {
			continue
		}
		c.keepRaw(r.Key, r.Data, false)
		job, changed, err := c.view.Apply(r.Key, r.Data, false)
		if err != nil {
			continue
		}
		n++
		if changed {
			jobs = append(jobs, job)
		}
		if strings.HasPrefix(r.Key, prefixCert) {
			if c.stale == nil {
				c.stale = map[string]bool{}
			}
			c.stale[r.Key] = true
		}
	}
	c.restored += n
	if len(c.stale) > 0 {
		// Held until the replay ends, not as each key is replayed: a
		// certificate's revocation may come in later in the replay.
		c.holding, c.held = true, maps.Clone(c.stale)
		c.view.Held = c.held
	}
	if synced.After(c.synced) {
		c.synced = synced
	}
	c.mu.Unlock()
	if c.cfg.OnChange != nil {
		for _, j := range jobs {
			c.cfg.OnChange(j)
		}
	}
	return n
}

func (c *Client) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run joins the fleet and keeps the view and the outbox in step with it
// until ctx is done, which returns nil. The fleet being out of reach is
// not an error: Run waits for it.
func (c *Client) Run(ctx context.Context) error {
	opts, err := c.options()
	if err != nil {
		c.release("no connection to the fleet")
		return err
	}
	hold := time.AfterFunc(HoldRestored, func() { c.release("the fleet did not replay them in time") })
	defer hold.Stop()
	nc, err := nats.Connect(strings.Join(c.cfg.URLs, ","), opts...)
	if err != nil {
		c.release("no connection to the fleet")
		return fmt.Errorf("fleet %s: %w", c.cfg.Name, err)
	}
	defer nc.Close()
	if !nc.IsConnected() {
		c.release("the fleet is out of reach")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("fleet %s: %w", c.cfg.Name, err)
	}
	kv, err := c.join(ctx, nc, js)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.publish(ctx, js, kv) })
	wg.Go(func() { c.consume(ctx, js) })
	c.watch(ctx, kv)
	wg.Wait()
	return nil
}

// join creates or binds the bucket and the stream and reads the salt,
// retrying each request until ctx is done.
func (c *Client) join(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := retry(ctx, c.cfg.Log, func(actx context.Context) error {
		var err error
		kv, err = js.CreateKeyValue(actx, jetstream.KeyValueConfig{Bucket: Bucket(c.cfg.Name), History: 8, Replicas: c.cfg.Replicas})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(actx, Bucket(c.cfg.Name))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	err = retry(ctx, c.cfg.Log, func(actx context.Context) error {
		_, err := js.CreateStream(actx, jetstream.StreamConfig{
			Name: Stream(c.cfg.Name), Subjects: []string{"quasim.fleet." + c.cfg.Name + ".trials.>"},
			Replicas: c.cfg.Replicas, MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 30, Discard: jetstream.DiscardOld,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var salt []byte
	err = retry(ctx, c.cfg.Log, func(actx context.Context) error {
		fresh := make([]byte, 32)
		rand.Read(fresh)
		_, err := kv.Create(actx, keySalt, fresh)
		if err == nil {
			salt = fresh
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		e, err := kv.Get(actx, keySalt)
		if err != nil {
			return err
		}
		salt = e.Value()
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.node = nodeID(salt, c.cfg.Key)
	c.connected = nc.IsConnected()
	node, trusted := c.node, c.cfg.Trust.IDs()
	c.mu.Unlock()
	c.cfg.Log.Info().Str("fleet", c.cfg.Name).Str("node", node).Strs("trusted", trusted).Msg("fleet joined")
	return kv, nil
}

// retry calls f with a context of its own, bounded by attempt, until it
// succeeds or ctx is done.
func retry(ctx context.Context, log zerolog.Logger, f func(context.Context) error) error {
	wait := 100 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		log.Debug().Err(err).Msg("fleet: retrying")
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// watch applies the bucket's records to the view: first those stored
// (until the watch's nil entry), then each update. The watch starts again
// from the last revision applied when the connection comes back, or when
// it falls behind the bucket and makes no progress for two checks (its
// consumer was on a server that died): a KV watch's consumer only finds
// that out by missed heartbeats, which takes many seconds. Replayed
// records change nothing.
func (c *Client) watch(ctx context.Context, kv jetstream.KeyValue) {
	var last uint64 // revision of the last record applied
	for ctx.Err() == nil {
		var opts []jetstream.WatchOpt
		if last > 0 {
			opts = append(opts, jetstream.ResumeFromRevision(last+1))
		}
		wctx, cancel := context.WithCancel(ctx)
		w, err := kv.WatchAll(wctx, opts...)
		if err != nil {
			cancel()
			c.cfg.Log.Debug().Err(err).Msg("fleet watch")
			if waitCtx(ctx, 250*time.Millisecond) {
				return
			}
			continue
		}
		last = c.follow(ctx, kv, w, last)
		c.inStep(false)
		w.Stop()
		cancel()
	}
}

// checkEvery is how often a watch checks that it keeps up with the bucket.
const checkEvery = time.Second

// follow applies w's entries until w ends, the connection came back or w
// is stuck behind the bucket; it returns the last revision applied.
func (c *Client) follow(ctx context.Context, kv jetstream.KeyValue, w jetstream.KeyWatcher, last uint64) uint64 {
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	stuck, checked := 0, last
	ready := false // the watch sent its nil entry
	for {
		select {
		case <-ctx.Done():
			return last
		case <-c.rewatch:
			return last
		case <-tick.C:
			actx, cancel := context.WithTimeout(ctx, attempt)
			st, err := kv.Status(actx)
			cancel()
			if err != nil {
				continue
			}
			behind := st.(*jetstream.KeyValueBucketStatus).StreamInfo().State.LastSeq > last
			if behind && last == checked {
				if stuck++; stuck >= 2 {
					return last
				}
			} else {
				stuck = 0
			}
			if !behind && ready {
				c.inStep(true)
			}
			checked = last
		case e, ok := <-w.Updates():
			if !ok {
				return last
			}
			if e == nil {
				ready = true
				c.dropStale()
				c.inStep(true)
				c.readyOnce()
				continue
			}
			last = max(last, e.Revision())
			del := e.Operation() != jetstream.KeyValuePut
			c.mu.Lock()
			delete(c.stale, e.Key())
			c.keepRaw(e.Key(), e.Value(), del)
			job, changed, err := c.view.Apply(e.Key(), e.Value(), del)
			var fail *Failure
			if err == nil && !del && strings.HasPrefix(e.Key(), prefixFail) {
				if f, err := CheckFailure(c.cfg.Trust, e.Key(), e.Value()); err == nil && f.Node != c.node && f.Reporter != certs.KeyID(c.cfg.Key.Public().(ed25519.PublicKey)) {
					f.Stored = e.Created()
					fail = &f
				}
			}
			c.mu.Unlock()
			if err != nil {
				c.log.Warn().Err(err).Str("key", clip(e.Key())).Msg("fleet record ignored")
				continue
			}
			if changed && c.cfg.OnChange != nil {
				c.cfg.OnChange(job)
			}
			if fail != nil && c.cfg.OnFailure != nil {
				c.cfg.OnFailure(*fail)
			}
			if c.cfg.OnRecord != nil && (strings.HasPrefix(e.Key(), prefixCert) || (!del && strings.HasPrefix(e.Key(), prefixRevoke))) {
				c.cfg.OnRecord(e.Key(), e.Value(), del)
			}
			if ready {
				c.inStep(true)
			}
		}
	}
}

// dropStale drops the restored offers the bucket no longer holds: it
// replayed every record it holds before its watch's nil entry. The hold
// ends with it, so OnChange is told of every job that had an offer held,
// the ones replayed unchanged (not changed by the replay, and held while
// it ran) included.
func (c *Client) dropStale() {
	c.mu.Lock()
	jobs := map[JobID]bool{}
	if c.holding {
		for k := range c.held {
			if j, ok := c.view.byKey[k]; ok {
				jobs[j] = true
			}
		}
	}
	keys := make([]string, 0, len(c.stale))
	for k := range c.stale {
		c.keepRaw(k, nil, true)
		if job, changed, _ := c.view.Apply(k, nil, true); changed {
			jobs[job] = true
		}
		keys = append(keys, k)
	}
	c.stale, c.holding, c.held, c.view.Held = nil, false, nil, nil
	c.mu.Unlock()
	for _, k := range keys {
		if c.cfg.OnRecord != nil {
			c.cfg.OnRecord(k, nil, true)
		}
	}
	if c.cfg.OnChange != nil {
		for j := range jobs {
			c.cfg.OnChange(j)
		}
	}
}

// HoldRestored bounds how long restored offers wait for the bucket to
// replay them while the fleet is in reach (Restore).
const HoldRestored = 5 * time.Second

// release makes the restored offers the bucket has not replayed live
// again (the fleet is out of reach, or took too long), and tells OnChange.
func (c *Client) release(why string) {
	c.mu.Lock()
	if !c.holding {
		c.mu.Unlock()
		return
	}
	c.holding, c.view.Held = false, nil
	jobs := map[JobID]bool{}
	for k := range c.held {
		if j, ok := c.view.byKey[k]; ok {
			jobs[j] = true
		}
	}
	n := len(c.held)
	c.held = nil
	c.mu.Unlock()
	c.cfg.Log.Info().Int("offers", n).Str("why", why).Msg("fleet: serving the offers kept from the last run")
	if c.cfg.OnChange != nil {
		for j := range jobs {
			c.cfg.OnChange(j)
		}
	}
}

// Holding says job has restored offers held back until the bucket
// replays them (Restore): it may have a live offer soon, and OnChange is
// told of it when they are live or gone.
func (c *Client) Holding(job JobID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holding {
		return false
	}
	for k := range c.view.offers[job] {
		if c.held[k] {
			return true
		}
	}
	return false
}

func (c *Client) readyOnce() {
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// waitCtx waits d; it reports whether ctx ended first.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// publish sends the outbox, retrying what the fleet did not take.
func (c *Client) publish(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) {
	wait := 100 * time.Millisecond
	for {
		if c.flush(ctx, js, kv) {
			wait = 100 * time.Millisecond
			select {
			case <-ctx.Done():
				return
			case <-c.kick:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// flush tries to send everything waiting once; it reports whether the
// outbox is empty.
func (c *Client) flush(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) bool {
	c.mu.Lock()
	node := c.node
	type out struct {
		k string
		p pending
	}
	waiting := make([]out, 0, len(c.out))
	for k, p := range c.out {
		waiting = append(waiting, out{k, p})
	}
	c.mu.Unlock()
	// Offers before revocations, else in the order queued: a node that
	// revokes and re-certifies at once must not show followers the
	// revocation alone, which sends them tuning for themselves.
	slices.SortFunc(waiting, func(a, b out) int {
		ra, rb := strings.HasPrefix(a.k, prefixRevoke), strings.HasPrefix(b.k, prefixRevoke)
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.p.gen, b.p.gen)
	})
	ok := true
	for _, w := range waiting {
		k, p := w.k, w.p
		key, data, err := p.build(node)
		if err != nil { // cannot happen for records built by this package
			c.cfg.Log.Error().Err(err).Str("key", k).Msg("fleet record dropped")
			c.remove(k, p.gen)
			continue
		}
		actx, cancel := context.WithTimeout(ctx, attempt)
		_, err = kv.Put(actx, key, data)
		cancel()
		if err != nil {
			ok = false
			continue
		}
		c.remove(k, p.gen)
	}
	for {
		c.mu.Lock()
		if len(c.summaries) == 0 {
			c.mu.Unlock()
			break
		}
		s := c.summaries[0]
		c.mu.Unlock()
		s.Node = node
		data, _ := encode(s)
		actx, cancel := context.WithTimeout(ctx, attempt)
		_, err := js.Publish(actx, Subject(c.cfg.Name, s.Job.Device), data)
		cancel()
		if err != nil {
			return false
		}
		c.mu.Lock()
		c.summaries = c.summaries[1:]
		c.published++
		c.mu.Unlock()
	}
	return ok
}

// pending is a record waiting in the outbox: build makes its KV key and
// value once the node's id is known.
type pending struct {
	gen   uint64
	build func(node string) (key string, data []byte, err error)
}

// remove drops k from the outbox unless a newer record replaced the one
// numbered gen.
func (c *Client) remove(k string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.out[k]; ok && cur.gen == gen {
		delete(c.out, k)
		c.published++
	}
}

func (c *Client) enqueue(what string, build func(node string) (string, []byte, error)) {
	c.mu.Lock()
	c.gen++
	c.out[what] = pending{gen: c.gen, build: build}
	c.mu.Unlock()
	c.poke()
}

// PublishCert offers a certificate, as signed (certs.Certificate.Encode),
// to the fleet. Its issuer must be the node's key.
func (c *Client) PublishCert(raw []byte) error {
	cert, err := certs.VerifyBytes(raw, c.cfg.Key.Public().(ed25519.PublicKey))
	if err != nil {
		return fmt.Errorf("publish certificate: %w", err)
	}
	at := c.cfg.Now().UTC()
	key := CertKey(jobOf(cert.Job), cert.Issuer)
	c.enqueue(key, func(node string) (string, []byte, error) {
		data, err := offerRecord(raw, node, at)
		return key, data, err
	})
	return nil
}

// PublishRevocation tells the fleet that certificate id, issued by this
// node, was revoked at at.
func (c *Client) PublishRevocation(id, reason string, at time.Time) {
	r := NewRevocation(c.cfg.Key, id, reason, at)
	c.enqueue(RevokeKey(id), func(string) (string, []byte, error) {
		data, err := encode(r)
		return RevokeKey(id), data, err
	})
}

// PublishFailure tells the fleet that certificate id failed verification
// on this node.
func (c *Client) PublishFailure(id, reason string) {
	at := c.cfg.Now()
	c.enqueue(prefixFail+id, func(node string) (string, []byte, error) {
		f := NewFailure(c.cfg.Key, id, node, reason, at)
		data, err := encode(f)
		return FailKey(id, node), data, err
	})
}

// PublishSummary queues a trial summary; the node id is filled in. When
// maxSummaries wait already, the oldest is dropped.
func (c *Client) PublishSummary(s Summary) {
	s.V = Version
	c.mu.Lock()
	if len(c.summaries) >= maxSummaries {
		c.summaries = c.summaries[1:]
		c.dropped++
	}
	c.summaries = append(c.summaries, s)
	c.mu.Unlock()
	c.poke()
}

// maxReceived bounds the summaries kept per kernel; the oldest go first.
const maxReceived = 20000

// consume reads the trial summaries of the other nodes from the stream,
// from its start, through an ordered consumer, which starts again where it
// was when its server goes.
func (c *Client) consume(ctx context.Context, js jetstream.JetStream) {
	var it jetstream.MessagesContext
	err := retry(ctx, c.cfg.Log, func(actx context.Context) error {
		cons, err := js.OrderedConsumer(actx, Stream(c.cfg.Name), jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		it, err = cons.Messages()
		return err
	})
	if err != nil {
		return
	}
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	node := c.NodeID()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) || waitCtx(ctx, 100*time.Millisecond) {
				return
			}
			continue
		}
		s, err := DecodeSummary(msg.Data())
		if err != nil {
			c.log.Warn().Err(err).Msg("fleet trial summary ignored")
			continue
		}
		if s.Node == node {
			continue
		}
		c.mu.Lock()
		r := append(c.received[s.Job.Kernel], s)
		if len(r) > maxReceived {
			r = r[len(r)-maxReceived:]
		}
		c.received[s.Job.Kernel] = r
		c.mu.Unlock()
	}
}

// Summaries are the other nodes' trial summaries of kernel received so
// far, oldest first.
func (c *Client) Summaries(kernel string) []Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.received[kernel])
}

// PublishContribution publishes this node's contribution to the
// aggregate of its kernel and device class (Contribute).
func (c *Client) PublishContribution(con Contribution) {
	at := c.cfg.Now()
	c.enqueue(prefixAgg+con.Kernel+"\x00"+con.Device, func(node string) (string, []byte, error) {
		s := con
		s.sign(c.cfg.Key, node, at)
		data, err := encode(s)
		return AggKey(s.Kernel, s.Device, node), data, err
	})
}

// Aggregate is the fleet's aggregate of kernel on device class dev, this
// node's contribution included once it is published.
func (c *Client) Aggregate(kernel, dev string) ([]Ranked, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.Aggregate(kernel, dev)
}

// SetTrust replaces the keys the node trusts besides its own and reads
// every record the view was given again under them: offers of keys no
// longer trusted go, and records left out before as untrusted are taken
// if they now verify. The view is rebuilt from the records held, not
// emptied until the bucket replays: a node out of reach of its fleet,
// or one just restored from its state file, keeps serving what it had.
// OnChange is told of every job whose offers were held before or after.
func (c *Client) SetTrust(t *Trust) {
	nt := NewTrust(c.cfg.Key.Public().(ed25519.PublicKey))
	if t != nil {
		for id, k := range t.keys {
			nt.keys[id] = k
		}
	}
	c.mu.Lock()
	jobs := map[JobID]bool{}
	for j := range c.view.offers {
		jobs[j] = true
	}
	v := NewView(nt)
	keys := make([]string, 0, len(c.raw))
	for k := range c.raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same order every time: rejections count alike
	for _, k := range keys {
		v.Apply(k, c.raw[k], false)
	}
	for j := range v.offers {
		jobs[j] = true
	}
	if c.holding {
		v.Held = c.held
	}
	c.cfg.Trust, c.view = nt, v
	c.mu.Unlock()
	if c.cfg.OnChange != nil {
		for j := range jobs {
			c.cfg.OnChange(j)
		}
	}
}

// keepRaw holds the record at key as the view was given it, for SetTrust.
// Deleting an offer or a contribution lets it go; a revocation or a
// failure report stands, as in the view. Called with c.mu held.
func (c *Client) keepRaw(key string, data []byte, deleted bool) {
	switch {
	case key == keySalt:
	case !deleted:
		c.raw[key] = data
	case strings.HasPrefix(key, prefixCert) || strings.HasPrefix(key, prefixAgg):
		delete(c.raw, key)
	}
}

// Offers are job's trusted live offers, best first (View.Live).
func (c *Client) Offers(job JobID) []Verified {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.Live(job)
}

// OfferOf is the trusted offer of certificate id, if the view holds one.
func (c *Client) OfferOf(id string) (Verified, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.OfferOf(id)
}

// LiveAt are the best trusted live offer of each job of kernel spec
// version specHash on device class dev, at any problem (View.LiveAt).
func (c *Client) LiveAt(kernel, specHash, dev string) []Verified {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.LiveAt(kernel, specHash, dev)
}

// Best is job's best trusted live offer, if any.
func (c *Client) Best(job JobID) (Verified, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.Best(job)
}

// Status is what a node can say of its fleet.
type Status struct {
	Fleet     string
	Node      string
	Connected bool
	Offers    int // verified offers held
	Peers     int // other nodes whose records are held
	Trusted   []string
	Rejected  Rejections
	Waiting   int // records and summaries not yet published
	Published int
	Dropped   int // summaries dropped from a full outbox
	// Live says the view is in step with the fleet now; Synced is when
	// it last was (zero: never, not even in a run Restore took it from).
	Live     bool
	Synced   time.Time
	Restored int // records taken from an earlier run (Restore)
}

// Status reports the client's state.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Status{Fleet: c.cfg.Name, Node: c.node, Connected: c.connected, Offers: c.view.Offers(),
		Peers: c.view.Nodes(c.node), Trusted: c.cfg.Trust.IDs(),
		Rejected: c.view.Rejected, Waiting: len(c.out) + len(c.summaries), Published: c.published, Dropped: c.dropped,
		Live: c.live && c.connected, Synced: c.synced, Restored: c.restored}
}
