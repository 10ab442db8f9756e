package sockapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A trials cursor names where the next page starts: the job, and the
// sequence number of the last trial of it already sent. On the wire it is
// opaque: base64url (unpadded) of "<job key>\n<seq>".

// Cursor is the cursor of the page after the trial seq of job.
func Cursor(job string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(job + "\n" + strconv.FormatUint(seq, 10)))
}

// ParseCursor reads a cursor Cursor made.
func ParseCursor(s string) (job string, seq uint64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, fmt.Errorf("not a cursor this daemon made: %v", err)
	}
	job, n, ok := strings.Cut(string(b), "\n")
	if !ok || job == "" {
		return "", 0, fmt.Errorf("not a cursor this daemon made")
	}
	seq, err = strconv.ParseUint(n, 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("not a cursor this daemon made: sequence %q", n)
	}
	return job, seq, nil
}

// PageLimit reads ?limit= of things: def when absent, at most most.
func PageLimit(r *http.Request, def, most int, things string) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, Invalidf("limit %q: want a number of %s from 1 to %d", v, things, most)
	}
	return n, nil
}
