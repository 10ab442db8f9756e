package daemon

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/internal/peercred"
	"github.com/quasim/quasim/internal/store"
)

type credKey struct{}

// connCred is http.Server.ConnContext: it reads the peer's credentials once
// per connection (of the socket under one the fast loop handed over).
func connCred(ctx context.Context, c net.Conn) context.Context {
	cred, err := peercred.Get(unwrapConn(c))
	if err != nil {
		return ctx // unknown peers may read and never write
	}
	return context.WithValue(ctx, credKey{}, cred)
}

// writers decides who may change the daemon's state, as tailscale's
// IsReadonlyConn does: root, the daemon's own uid, operator uids and
// members of the operator group. Everyone who can connect may read.
type writers struct {
	self      uint32
	operators []uint32
	group     string
	// groupsOf returns a uid's group ids; replaced in tests.
	groupsOf func(uid uint32) ([]string, error)
	groupID  func(name string) (string, error)
}

func newWriters(operators []uint32, group string) *writers {
	return &writers{
		self:      uint32(os.Getuid()),
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

func (w *writers) allowed(ctx context.Context) bool {
	cred, ok := ctx.Value(credKey{}).(peercred.Cred)
	if !ok {
		return false
	}
	if cred.UID == 0 || cred.UID == w.self || slices.Contains(w.operators, cred.UID) {
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

// right is what a route needs of its caller.
type right int

const (
	read    right = iota // anyone who can connect
	observe              // any local uid, rate-limited: runtimes reporting what they saw
	write                // writers: tuning, import, reload, revocation
)

// authorize checks that r's peer has the right to call pattern; an
// observer spends one token of its uid's bucket.
func (s *server) authorize(r *http.Request, pattern string, need right) error {
	switch need {
	case write:
		if !s.writers.allowed(r.Context()) {
			return permissionf("%s needs uid 0, the daemon's uid, group %s or --operator", pattern, s.writers.group)
		}
	case observe:
		cred, ok := r.Context().Value(credKey{}).(peercred.Cred)
		if !ok {
			return permissionf("%s needs a local peer whose uid the socket reports", pattern)
		}
		return s.observers.take(cred.UID, 1)
	}
	return nil
}

// requester is who sent r, for a job r's lookup adds.
func requester(r *http.Request, now time.Time) store.Requester {
	cred, ok := r.Context().Value(credKey{}).(peercred.Cred)
	if !ok {
		return store.Requester{UID: math.MaxUint32, User: "unknown peer", At: now}
	}
	// The user name is looked up by named, once a request is kept: a
	// lookup that adds nothing costs no passwd (or NSS) read.
	return store.Requester{UID: cred.UID, At: now}
}

// named fills in r's user name, when the uid has one.
func named(r store.Requester) store.Requester {
	if r.User == "" && r.UID != math.MaxUint32 {
		if u, err := user.LookupId(strconv.FormatUint(uint64(r.UID), 10)); err == nil {
			r.User = u.Username
		}
	}
	return r
}

// requesterString is how status and listings show who asked.
func requesterString(r *store.Requester) string {
	if r == nil {
		return ""
	}
	if r.User != "" {
		return fmt.Sprintf("uid %d (%s)", r.UID, r.User)
	}
	return fmt.Sprintf("uid %d", r.UID)
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
			writeError(w, permissionf("requests from browsers are refused"))
			return
		}
		if !validHost(r.Host) {
			writeError(w, permissionf("invalid Host %q", strings.TrimSpace(r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}
