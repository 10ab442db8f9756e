package daemon

import (
	"fmt"
	"math"
	"net/http"
	"os/user"
	"strconv"
	"time"

	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/internal/store"
)

// requester is who sent r, for a job r's lookup adds.
func requester(r *http.Request, now time.Time) store.Requester {
	cred, ok := sockapi.Peer(r)
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
