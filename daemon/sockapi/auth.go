package sockapi

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/quasim/quasim/internal/peercred"
)

type credKey struct{}

// ConnCred is http.Server.ConnContext: it reads the peer's credentials once
// per connection (of the socket under one the fast loop handed over).
func ConnCred(ctx context.Context, c net.Conn) context.Context {
	cred, err := peercred.Get(unwrapConn(c))
	if err != nil {
		return ctx // unknown peers may read and never write
	}
	return WithPeer(ctx, cred)
}

// WithPeer is ctx of a connection whose peer is cred.
func WithPeer(ctx context.Context, cred peercred.Cred) context.Context {
	return context.WithValue(ctx, credKey{}, cred)
}

// Peer is r's peer, when the socket reported it.
func Peer(r *http.Request) (peercred.Cred, bool) {
	cred, ok := r.Context().Value(credKey{}).(peercred.Cred)
	return cred, ok
}

// Writers decides who may change the daemon's state, as tailscale's
// IsReadonlyConn does: root, the daemon's own uid (Self), operator uids and
// members of the operator group. Everyone who can connect may read.
type Writers struct {
	Self      uint32
	operators []uint32
	group     string
	// groupsOf returns a uid's group ids; replaced in tests.
	groupsOf func(uid uint32) ([]string, error)
	groupID  func(name string) (string, error)
}

// NewWriters lets the operator uids and the members of group write.
func NewWriters(operators []uint32, group string) *Writers {
	return &Writers{
		Self:      uint32(os.Getuid()),
		operators: operators,
		group:     group,
		groupsOf: func(uid uint32) ([]string, error) {
			u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
			if err != nil {
				return nil, err
			}
			return u.GroupIds()
		},
		groupID: func(name string) (string, error) {
			g, err := user.LookupGroup(name)
			if err != nil {
				return "", err
			}
			return g.Gid, nil
		},
	}
}

// allowed says whether ctx's peer may write.
func (w *Writers) allowed(ctx context.Context) bool {
	cred, ok := ctx.Value(credKey{}).(peercred.Cred)
	if !ok {
		return false
	}
	if cred.UID == 0 || cred.UID == w.Self || slices.Contains(w.operators, cred.UID) {
		return true
	}
	if w.group == "" {
		return false
	}
	gid, err := w.groupID(w.group)
	if err != nil {
		return false
	}
	if strconv.FormatUint(uint64(cred.GID), 10) == gid {
		return true
	}
	groups, err := w.groupsOf(cred.UID)
	return err == nil && slices.Contains(groups, gid)
}

// Right is what a route needs of its caller.
type Right int

const (
	Read    Right = iota // anyone who can connect
	Observe              // any local uid, rate-limited: runtimes reporting what they saw
	Write                // writers: tuning, import, reload, revocation
)

// authorize checks that r's peer has the right to call pattern; an
// observer spends one token of its uid's bucket.
func (s *Server) authorize(r *http.Request, pattern string, need Right) error {
	switch need {
	case Write:
		if !s.Writers.allowed(r.Context()) {
			return Permissionf("%s needs uid 0, the daemon's uid, group %s or --operator", pattern, s.Writers.group)
		}
	case Observe:
		cred, ok := Peer(r)
		if !ok {
			return Permissionf("%s needs a local peer whose uid the socket reports", pattern)
		}
		return s.Observers.take(cred.UID, 1)
	}
	return nil
}

// MayWrite says whether r's peer may write, as Write routes check.
func (s *Server) MayWrite(r *http.Request) bool {
	return s.Writers.allowed(r.Context())
}

// Spend spends cost more tokens of r's peer's bucket, for a request of an
// Observe route that carries much; nil when r's peer is unknown.
func (s *Server) Spend(r *http.Request, cost float64) error {
	cred, ok := Peer(r)
	if !ok {
		return nil
	}
	return s.Observers.take(cred.UID, cost)
}

// validHost accepts what curl --unix-socket and the client send.
func validHost(h string) bool {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.ToLower(h) // host names are case-insensitive
	return h == "quasimd" || h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// guard rejects browsers and other hosts before any handler runs.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			WriteError(w, Permissionf("requests from browsers are refused"))
			return
		}
		if !validHost(r.Host) {
			WriteError(w, Permissionf("invalid Host %q", strings.TrimSpace(r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
