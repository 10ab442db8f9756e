package sockapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
)

// Config is what New serves. Writers and Lookups are required.
type Config struct {
	Version   string
	Log       zerolog.Logger
	Writers   *Writers // who may call Write routes
	Observers *Limiter // each uid's rate on Observe routes; nil: no limit
	// Routes is the route table, sorted by path: each route answers JSON
	// through Handle, after its Right is checked.
	Routes []Route
	// Lookups answers GET /v1/configs, on the fast loop and through net/http.
	Lookups Lookups
	// The routes that write more than JSON, or bound their bodies
	// themselves, check their callers themselves.
	Cert         http.HandlerFunc // GET /v1/certs/{id}
	MemgraphPlan http.HandlerFunc // POST /v1/memgraph/plan: its own 413 and body bounds
	Metrics      http.Handler     // GET /metrics; nil: not served
	// BaseContext is every request's parent; nil: context.Background.
	BaseContext context.Context
}

// Route is one entry of the route table.
type Route struct {
	Pattern string
	Right   Right
	Handle  func(*http.Request) (any, error)
}

// Answer is an encoded answer to GET /v1/configs, as the answer cache keeps it.
type Answer struct {
	Body    []byte
	ETag    []string           // the ETag header: a hash of Body
	Counter prometheus.Counter // quasim_config_lookups_total of its kernel and match; nil without metrics
}

// count counts a lookup that a answered.
func (a Answer) count() {
	if a.Counter != nil {
		a.Counter.Inc()
	}
}

// Lookups is what GET /v1/configs needs of the daemon: its answer cache.
type Lookups interface {
	// Hit returns the answer cached for key (see AnswerKey) of kernel,
	// without computing one: the fast loop's path, so it must not allocate.
	Hit(kernel string, key []byte) (Answer, bool)
	// Answer returns the answer to r, whose query is q and whose cache key
	// is key, from the cache or computed (and cached when it may be).
	Answer(r *http.Request, q url.Values, key string) (Answer, error)
	// Changed is closed at the next change of a served config or kernel.
	Changed() <-chan struct{}
}

// Server serves the socket API: the route table behind authorisation, the
// guard and the version header, on a listener whose connections start on
// the fast lookup loop (see socketServer).
type Server struct {
	// Writers and Observers are read at each request: tests replace them.
	Writers   *Writers
	Observers *Limiter

	cfg  Config
	log  zerolog.Logger
	hs   *http.Server
	sock *socketServer
}

// New returns the server of cfg; it serves nothing before Serve.
func New(cfg Config) *Server {
	if cfg.Writers == nil || cfg.Lookups == nil {
		panic("sockapi.New: Writers and Lookups are required")
	}
	s := &Server{Writers: cfg.Writers, Observers: cfg.Observers, cfg: cfg, log: cfg.Log}
	s.hs = &http.Server{
		Handler:           s.Handler(),
		ConnContext:       ConnCred,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	if ctx := cfg.BaseContext; ctx != nil {
		s.hs.BaseContext = func(net.Listener) context.Context { return ctx }
	}
	s.sock = newSocketServer(s, s.hs)
	return s
}

// Serve accepts connections on ln until Shutdown or Close, then returns
// http.ErrServerClosed, as http.Server.Serve does.
func (s *Server) Serve(ln net.Listener) error { return s.sock.Serve(ln) }

// Shutdown stops accepting and waits for the requests in progress until
// ctx is done, as http.Server.Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.sock.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.sock.Close() }

// Handed counts the connections the fast loop handed to net/http, and the
// lookups it answered by running the handler.
func (s *Server) Handed() (handed, handled uint64) {
	return s.sock.handed.Load(), s.sock.handled.Load()
}

// maxWait bounds a long poll on GET /v1/configs.
const maxWait = 5 * time.Minute

var jsonType = []string{"application/json"}

// Handler is the API as net/http serves it, without the fast loop.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(api.RouteConfig, s.cachedConfig)
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics)
	}
	mux.HandleFunc(api.RouteCert, s.cfg.Cert)
	mux.HandleFunc(RouteProfile, s.getProfile)
	mux.HandleFunc(api.RouteMemgraphPlan, s.cfg.MemgraphPlan) // its own 413 and body bounds
	for _, rt := range s.cfg.Routes {
		if rt.Pattern == api.RouteConfig {
			continue
		}
		mux.HandleFunc(rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := s.authorize(r, rt.Pattern, rt.Right); err != nil {
				WriteError(w, err)
				return
			}
			// 413 before the handler looks at anything else, on every route.
			if r.ContentLength > api.MaxBodyBytes {
				WriteError(w, TooLargef("body of %d bytes: at most %d bytes a request", r.ContentLength, api.MaxBodyBytes))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, api.MaxBodyBytes)
			start := time.Now()
			v, err := rt.Handle(r)
			if err != nil {
				status, _ := StatusOf(err)
				ev := s.log.Debug()
				if status >= 500 {
					ev = s.log.Error()
				}
				ev.Err(err).Str("route", rt.Pattern).Int("status", status).Msg("request failed")
				WriteError(w, err)
				return
			}
			s.log.Debug().Str("route", rt.Pattern).Dur("dur", time.Since(start)).Msg("request")
			WriteJSON(w, http.StatusOK, v)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(mux, r); allow != "" {
			methodNotAllowed(w, r, allow)
			return
		}
		WriteError(w, NotFoundf("no route %s %s", r.Method, r.URL.Path))
	})
	return s.versioned(guard(mux))
}

func (s *Server) versioned(next http.Handler) http.Handler {
	v := []string{s.cfg.Version}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()[api.HeaderVersion] = v
		next.ServeHTTP(w, r)
	})
}

// cachedConfig serves GET /v1/configs from the cache, the runtimes' hot
// path. The answer carries an ETag; a request whose If-None-Match equals
// it gets 304, at once or, with wait=DURATION, when nothing changed within
// that time: a runtime long-polls this way to hot-swap promoted configs.
func (s *Server) cachedConfig(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			WriteError(w, Invalidf("wait %q: want a duration such as 30s", v))
			return
		}
		wait = min(d, maxWait)
	}
	key := string(appendAnswerKey(nil, []byte(q.Get("problem")), []byte(q.Get("device")),
		[]byte(q.Get("objective")), []byte(q.Get("max_slowdown"))))
	inm := r.Header.Get("If-None-Match")
	var timer <-chan time.Time
	for {
		changed := s.cfg.Lookups.Changed()
		a, err := s.cfg.Lookups.Answer(r, q, key)
		if err != nil {
			WriteError(w, err)
			return
		}
		h := w.Header()
		h["Etag"] = a.ETag
		if timer == nil {
			a.count()
		}
		if inm == "" || inm != a.ETag[0] {
			h["Content-Type"] = jsonType
			w.Write(a.Body)
			return
		}
		if wait == 0 {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-changed:
		case <-timer:
			w.WriteHeader(http.StatusNotModified)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// DecodeBody reads r's JSON body into v; a body over api.MaxBodyBytes,
// declared or read, is 413 as on every route that takes a body.
func DecodeBody(r *http.Request, v any) error {
	if r.ContentLength > api.MaxBodyBytes {
		return TooLargef("body of %d bytes: at most %d bytes a request", r.ContentLength, api.MaxBodyBytes)
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return TooLargef("body larger than %d bytes", mbe.Limit)
		}
		return Invalidf("read body: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalidf("body: %v", err)
	}
	return nil
}

// TCPHandler is what --metrics-listen serves: GET /metrics, and with ui
// the pages under /ui/ (read over the socket).
func TCPHandler(metrics http.Handler, ui bool, socket, version string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	if ui {
		mux.Handle("GET /ui/", uiHandler(socket, version))
	}
	return mux
}
