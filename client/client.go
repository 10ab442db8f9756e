package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quasim/quasim/api"
)

// Client talks to quasimd over its Unix socket. The zero value is ready to
// use; a Client is safe for concurrent use and must not be copied after its
// first request.
type Client struct {
	// Socket is the path of quasimd's Unix socket; "" means the first of
	// Sockets() that answers.
	Socket string
	// Transport carries the requests, for tests; nil means a transport that
	// dials Socket.
	Transport http.RoundTripper
	// OnVersionMismatch, if set, is called once when the daemon's
	// Quasim-Version header differs from Version.
	OnVersionMismatch func(daemon string)
	// Version is this client's version, for the mismatch check; "" disables
	// the check.
	Version string

	once     sync.Once
	hc       *http.Client
	socks    []string               // the sockets tried, in order
	dialed   atomic.Pointer[string] // the socket last connected to
	mismatch sync.Once
}

// Size limits on what the client reads back.
const (
	maxResponseBytes = 256 << 20 // a large kernel's trials
	maxErrorBytes    = 64 << 10
)

// systemSocket is where quasimd listens as a system service (systemd's
// RuntimeDirectory=quasim). A distribution that keeps the service's socket
// elsewhere sets it when linking:
//
//	-ldflags '-X github.com/quasim/quasim/client.systemSocket=/var/run/quasim/quasimd.sock'
var systemSocket = "/run/quasim/quasimd.sock"

// SystemSocket is the socket of quasimd run as a system service.
func SystemSocket() string { return systemSocket }

// UserSocket is the socket of a quasimd a user runs for themselves, where
// quasimd listens by default for that user: $XDG_RUNTIME_DIR/quasim/quasimd.sock,
// else /tmp/quasim-<uid>/quasimd.sock (under $TMPDIR when that is set). For
// root it is SystemSocket.
func UserSocket() string { return userSocket(getuid(), os.Getenv, os.TempDir()) }

func userSocket(uid int, getenv func(string) string, tmp string) string {
	if uid == 0 {
		return systemSocket
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "quasim", "quasimd.sock")
	}
	return filepath.Join(tmp, "quasim-"+strconv.Itoa(uid), "quasimd.sock")
}

// Sockets returns the sockets a Client with no Socket tries, in this
// order (as Docker and tailscale do):
//
//  1. $QUASIM_SOCKET, alone, when it is set;
//  2. UserSocket, when a daemon answers there;
//  3. SystemSocket.
//
// So an ordinary user reaches the system service unless they run their own
// daemon. Each new connection tries them in order: a user daemon started
// later is preferred from then on.
func Sockets() []string { return sockets(getuid(), os.Getenv, os.TempDir()) }

// getuid is os.Getuid; tests pretend to be another user.
var getuid = os.Getuid

func sockets(uid int, getenv func(string) string, tmp string) []string {
	if s := getenv("QUASIM_SOCKET"); s != "" {
		return []string{s}
	}
	if u := userSocket(uid, getenv, tmp); u != systemSocket {
		return []string{u, systemSocket}
	}
	return []string{systemSocket}
}

// DefaultSocket is the first of Sockets: $QUASIM_SOCKET if set, else
// UserSocket.
func DefaultSocket() string { return Sockets()[0] }

func (c *Client) lazyInit() {
	c.once.Do(func() {
		c.socks = []string{c.Socket}
		if c.Socket == "" {
			c.socks = Sockets()
		}
		rt := c.Transport
		if rt == nil {
			rt = &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return c.dial(ctx)
				},
				MaxIdleConns:       4,
				IdleConnTimeout:    30 * time.Second,
				DisableCompression: true,
			}
		}
		c.hc = &http.Client{Transport: rt}
	})
}

// dial connects to the first of the client's sockets that answers.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	e := &unavailableError{}
	for _, s := range c.socks {
		conn, err := d.DialContext(ctx, "unix", s)
		if err == nil {
			c.dialed.Store(&s)
			return conn, nil
		}
		e.sockets = append(e.sockets, s)
		e.errs = append(e.errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, e
}

// Dialed is the socket of the client's last connection to the daemon, ""
// before the first one.
func (c *Client) Dialed() string {
	if s := c.dialed.Load(); s != nil {
		return *s
	}
	return ""
}

// Status returns the daemon's state: version, uptime, directories, counts.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	return call[api.Status](ctx, c, http.MethodGet, "/v1/status", nil, nil)
}

// Fleet returns the daemon's part in its fleet, if any.
func (c *Client) Fleet(ctx context.Context) (api.FleetStatus, error) {
	return call[api.FleetStatus](ctx, c, http.MethodGet, "/v1/fleet", nil, nil)
}

// Kernels lists the kernels quasimd knows with their jobs.
func (c *Client) Kernels(ctx context.Context) ([]api.Kernel, error) {
	return call[[]api.Kernel](ctx, c, http.MethodGet, "/v1/kernels", nil, nil)
}

// KernelsPage lists the kernels with at most limit of their jobs in all (0:
// the daemon's default page) from cursor (empty: the first), with the
// cursor of the next page in Next.
func (c *Client) KernelsPage(ctx context.Context, limit int, cursor string) (api.KernelsPage, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	q.Set("cursor", cursor) // present, even empty, asks for a page
	return call[api.KernelsPage](ctx, c, http.MethodGet, "/v1/kernels", q, nil)
}

// Config returns the config a runtime should use for kernel at problem on
// device; an empty problem or device is left to the daemon.
func (c *Client) Config(ctx context.Context, kernel, problem, device string) (api.Config, error) {
	return c.config(ctx, kernel, configQuery(problem, device))
}

func (c *Client) config(ctx context.Context, kernel string, q url.Values) (api.Config, error) {
	p, err := kernelPath("/v1/configs/", kernel, "")
	if err != nil {
		return api.Config{}, err
	}
	return call[api.Config](ctx, c, http.MethodGet, p, q, nil)
}

// configQuery is the query of a config lookup.
func configQuery(problem, device string) url.Values {
	q := url.Values{}
	if problem != "" {
		q.Set("problem", problem)
	}
	if device != "" {
		q.Set("device", device)
	}
	return q
}

// WatchConfig is Config for a caller that holds an answer: etag is the
// ETag that answer came with. It returns at once when the daemon's answer
// is another one, else when it changes within wait; changed is false, and
// cfg zero, when it did not. An empty etag fetches the answer at once. The
// returned tag goes with the answer the caller then holds.
// ConfigPolicy is Config with a lookup policy: the config of the job's
// (time, energy) front that p chooses (see api.Policy).
func (c *Client) ConfigPolicy(ctx context.Context, kernel, problem, device string, p api.Policy) (api.Config, error) {
	q := configQuery(problem, device)
	q.Set("objective", p.Objective)
	if p.MaxSlowdown >= 0 {
		q.Set("max_slowdown", strconv.FormatFloat(p.MaxSlowdown, 'g', -1, 64))
	}
	return c.config(ctx, kernel, q)
}

func (c *Client) WatchConfig(ctx context.Context, kernel, problem, device, etag string, wait time.Duration) (cfg api.Config, tag string, changed bool, err error) {
	p, err := kernelPath("/v1/configs/", kernel, "")
	if err != nil {
		return cfg, etag, false, err
	}
	q := configQuery(problem, device)
	var hdr http.Header
	if etag != "" {
		hdr = http.Header{"If-None-Match": {etag}}
		if wait > 0 {
			q.Set("wait", wait.String())
		}
	}
	resp, err := c.doHeader(ctx, http.MethodGet, p, q, nil, hdr)
	if err != nil {
		return cfg, etag, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return cfg, etag, false, nil
	}
	cfg, err = decodeJSON[api.Config](resp)
	if err != nil {
		return cfg, etag, false, err
	}
	return cfg, resp.Header.Get("ETag"), true, nil
}

// Tune asks quasimd to start tuning kernel now and names the jobs it queued.
func (c *Client) Tune(ctx context.Context, kernel string, req api.TuneRequest) (api.TuneResponse, error) {
	p, err := kernelPath("/v1/kernels/", kernel, "/tune")
	if err != nil {
		return api.TuneResponse{}, err
	}
	return call[api.TuneResponse](ctx, c, http.MethodPost, p, nil, req)
}

// Trials returns all of kernel's stored trials, page after page; a
// non-empty problem keeps only that problem's.
func (c *Client) Trials(ctx context.Context, kernel, problem string) (api.Trials, error) {
	all := api.Trials{Kernel: kernel, Trials: []api.Trial{}}
	cursor := ""
	for {
		page, err := c.TrialsPage(ctx, kernel, problem, api.MaxTrialsLimit, cursor)
		if err != nil {
			return api.Trials{}, err
		}
		all.Kernel, all.Params = page.Kernel, page.Params
		all.Trials = append(all.Trials, page.Trials...)
		if page.Next == "" {
			return all, nil
		}
		if page.Next == cursor {
			return api.Trials{}, fmt.Errorf("trials of %s: the daemon sent cursor %q again", kernel, cursor)
		}
		cursor = page.Next
	}
}

// TrialsPage returns one page of kernel's stored trials: at most limit
// (0: the daemon's default page) from cursor (empty: the first), with the
// cursor of the next page in Next.
func (c *Client) TrialsPage(ctx context.Context, kernel, problem string, limit int, cursor string) (api.Trials, error) {
	p, err := kernelPath("/v1/kernels/", kernel, "/trials")
	if err != nil {
		return api.Trials{}, err
	}
	q := url.Values{}
	if problem != "" {
		q.Set("problem", problem)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return call[api.Trials](ctx, c, http.MethodGet, p, q, nil)
}

// Cycles returns kernel's tuning cycles, running and past.
func (c *Client) Cycles(ctx context.Context, kernel string) (api.Cycles, error) {
	return c.CyclesOf(ctx, kernel, "")
}

// CyclesOf is Cycles of the kernel's jobs at problem ("": all of them).
func (c *Client) CyclesOf(ctx context.Context, kernel, problem string) (api.Cycles, error) {
	p, err := kernelPath("/v1/kernels/", kernel, "/cycles")
	if err != nil {
		return api.Cycles{}, err
	}
	var q url.Values
	if problem != "" {
		q = url.Values{"problem": {problem}}
	}
	return call[api.Cycles](ctx, c, http.MethodGet, p, q, nil)
}

// Import stores recorded trials of kernel for one problem and device.
func (c *Client) Import(ctx context.Context, kernel string, req api.ImportRequest) (api.ImportResponse, error) {
	p, err := kernelPath("/v1/kernels/", kernel, "/import")
	if err != nil {
		return api.ImportResponse{}, err
	}
	return call[api.ImportResponse](ctx, c, http.MethodPost, p, nil, req)
}

// Devices reports what the daemon can measure on.
func (c *Client) Devices(ctx context.Context) (api.Devices, error) {
	return call[api.Devices](ctx, c, http.MethodGet, "/v1/devices", nil, nil)
}

// Observe reports what runtimes measured of served configs; quasimd marks
// drifting ones stale and re-tunes them.
func (c *Client) Observe(ctx context.Context, req api.ObservationsRequest) (api.ObservationsResponse, error) {
	return call[api.ObservationsResponse](ctx, c, http.MethodPost, "/v1/observations", nil, req)
}

// PostSpans sends a batch of one declared pipeline's spans (POST
// /v1/spans). spans is what marshals to a JSON array of causal.Span (a
// []causal.Span, or json.RawMessage bytes as they are). A bad span is
// ErrInvalidArgument naming its index and field, and nothing of the batch
// is stored; an undeclared pipeline is ErrNotFound; past the per-uid rate
// it is ErrRateLimited, an *Error whose RetryAfter says when to try again.
func (c *Client) PostSpans(ctx context.Context, spans any) (api.SpansResponse, error) {
	return call[api.SpansResponse](ctx, c, http.MethodPost, "/v1/spans", nil, spans)
}

// Causal returns the profile of a declared pipeline from its stored spans
// (GET /v1/causal/{pipeline}).
func (c *Client) Causal(ctx context.Context, pipeline string) (api.Causal, error) {
	if pipeline == "" {
		return api.Causal{}, fmt.Errorf("empty pipeline name: %w", api.ErrInvalidArgument)
	}
	return call[api.Causal](ctx, c, http.MethodGet, "/v1/causal/"+url.PathEscape(pipeline), nil, nil)
}

// Reload makes quasimd re-read its kernel specs and schedules.
func (c *Client) Reload(ctx context.Context) (api.ReloadResponse, error) {
	return call[api.ReloadResponse](ctx, c, http.MethodPost, "/v1/reload", nil, nil)
}

// kernelPath builds prefix + escaped kernel + suffix.
func kernelPath(prefix, kernel, suffix string) (string, error) {
	if kernel == "" {
		return "", fmt.Errorf("empty kernel name: %w", api.ErrInvalidArgument)
	}
	return prefix + url.PathEscape(kernel) + suffix, nil
}

// call sends one request and decodes its answer into T.
func call[T any](ctx context.Context, c *Client, method, path string, q url.Values, body any) (T, error) {
	resp, err := c.do(ctx, method, path, q, body)
	if err != nil {
		var zero T
		return zero, err
	}
	defer resp.Body.Close()
	return decodeJSON[T](resp)
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any) (*http.Response, error) {
	return c.doHeader(ctx, method, path, q, body, nil)
}

// doHeader is do with extra request headers.
func (c *Client) doHeader(ctx context.Context, method, path string, q url.Values, body any, hdr http.Header) (*http.Response, error) {
	c.lazyInit()
	u := "http://" + api.Host + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if raw, ok := body.([]byte); ok {
		rd = bytes.NewReader(raw) // sent as is: a graph or a model file
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Version != "" {
		req.Header.Set("User-Agent", "quasim-client/"+c.Version)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		var ue *unavailableError
		if errors.As(err, &ue) {
			return nil, ue
		}
		return nil, fmt.Errorf("%s %s: %w: %w", method, path, api.ErrUnavailable, unwrapURLError(err))
	}
	c.checkVersion(resp.Header.Get(api.HeaderVersion))
	return resp, nil
}

// unwrapURLError drops the *url.Error layer, which repeats method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) checkVersion(daemon string) {
	if c.Version == "" || c.OnVersionMismatch == nil || daemon == "" || daemon == c.Version {
		return
	}
	c.mismatch.Do(func() { c.OnVersionMismatch(daemon) })
}

// decodeJSON reads resp's body as a T, or as an api.Error when the status
// is not 2xx. It does not close the body.
func decodeJSON[T any](resp *http.Response) (T, error) {
	var v T
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return v, errorFrom(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return v, fmt.Errorf("read answer: %w: %w", api.ErrUnavailable, err)
	}
	if len(b) > maxResponseBytes {
		return v, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("decode answer: %w", err)
	}
	return v, nil
}
