package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/causal"
)

// spanServer answers POST /v1/spans on a real Unix socket as quasimd's
// route does, with the answers the real daemon gives only under load or
// limits made to order (TestSpansAgainstDaemon runs the real one): the body
// is decoded and validated whole by causal.DecodeSpans (the daemon's
// validator), an unknown pipeline is 404, a body over maxBody 413, and the
// first tooMany requests 429 (with Retry-After: retryAfter when set), and
// the first limited[p] batches of pipeline p too.
type spanServer struct {
	sock       string
	pipelines  map[string]bool
	maxBody    int64
	tooMany    atomic.Int32
	retryAfter string
	hang       chan struct{} // when not nil, every request waits for it to close
	limited    map[string]int

	requests atomic.Int32
	got      chan []causal.Span // each accepted batch

	mu      sync.Mutex
	batches [][]causal.Span
}

func newSpanServer(t testing.TB, pipelines ...string) *spanServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "qsp") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &spanServer{sock: filepath.Join(dir, "q.sock"), pipelines: map[string]bool{}, limited: map[string]int{}, maxBody: 8 << 20, got: make(chan []causal.Span, 1024)}
	for _, p := range pipelines {
		s.pipelines[p] = true
	}
	ln, err := net.Listen("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/spans", s.post)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() {
		if s.hang != nil {
			close(s.hang)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return s
}

func (s *spanServer) post(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.hang != nil {
		<-s.hang
	}
	if s.tooMany.Add(-1) >= 0 {
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		writeErr(w, http.StatusTooManyRequests, api.CodeRateLimited, "spans: rate limited")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeErr(w, http.StatusRequestEntityTooLarge, api.CodeInvalidArgument, "spans: body over "+strconv.FormatInt(s.maxBody, 10)+" bytes")
		return
	}
	spans, err := causal.DecodeSpans(body)
	if err != nil {
		writeErr(w, http.StatusBadRequest, api.CodeInvalidArgument, err.Error())
		return
	}
	s.mu.Lock()
	limited := s.limited[spans[0].Pipeline] > 0
	if limited {
		s.limited[spans[0].Pipeline]--
	}
	s.mu.Unlock()
	if limited {
		writeErr(w, http.StatusTooManyRequests, api.CodeRateLimited, "spans: rate limited")
		return
	}
	if !s.pipelines[spans[0].Pipeline] {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, "spans: pipeline "+strconv.Quote(spans[0].Pipeline)+" not found")
		return
	}
	s.mu.Lock()
	s.batches = append(s.batches, spans)
	s.mu.Unlock()
	s.got <- spans
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(map[string]int{"stored": len(spans)})
}

func writeErr(w http.ResponseWriter, status int, code api.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(api.Error{Error: msg, Code: code})
}

// limit answers the next n batches of pipeline p with 429.
func (s *spanServer) limit(p string, n int) {
	s.mu.Lock()
	s.limited[p] = n
	s.mu.Unlock()
}

// all returns the spans of every accepted batch.
func (s *spanServer) all() []causal.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []causal.Span
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

// next waits for the next accepted batch.
func (s *spanServer) next(t testing.TB) []causal.Span {
	t.Helper()
	select {
	case b := <-s.got:
		return b
	case <-time.After(20 * time.Second):
		t.Fatal("no batch reached the server within 20s")
		return nil
	}
}
