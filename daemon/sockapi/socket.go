package sockapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// socketServer serves the API socket. Each connection starts on a loop of
// its own that answers GET /v1/configs, the runtimes' hot path, without
// net/http: net/http costs a lookup about 20 allocations and a goroutine
// started per request (its background read), and on a 2-core machine
// those, with the GC they drive, made the lookup's p99 7-16 times a raw
// socket echo's. The first request the loop does not take whole (another
// route, a body, a long poll, anything unusual in the request) hands the
// connection, with the bytes read so far, to the http.Server, which serves
// it from then on; a connection is never taken back. A lookup the answer
// cache does not hold runs the same handler net/http would run, so both
// give the same answers, counted the same way.
type socketServer struct {
	hs      *http.Server
	s       *Server // for the cached answers and the version
	handoff *handoffListener

	mu      sync.Mutex
	ln      net.Listener
	conns   map[*fastConn]struct{}
	closing atomic.Bool
	wg      sync.WaitGroup // the fast connections' loops

	// handed counts the connections handed to net/http; handled the
	// lookups the fast loop answered by running the handler.
	handed, handled atomic.Uint64
}

// newSocketServer serves s's API through hs, whose Handler must be
// s.Handler(): hs's timeouts, ConnContext and BaseContext apply to both
// paths.
func newSocketServer(s *Server, hs *http.Server) *socketServer {
	if hs.Handler == nil {
		panic("socketServer: http.Server without a handler")
	}
	return &socketServer{hs: hs, s: s, conns: map[*fastConn]struct{}{}}
}

// Serve accepts connections on ln until Shutdown or Close, then returns
// http.ErrServerClosed, as http.Server.Serve does.
func (ss *socketServer) Serve(ln net.Listener) error {
	ss.mu.Lock()
	if ss.closing.Load() {
		ss.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	ss.ln = ln
	ss.handoff = &handoffListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	ss.mu.Unlock()
	served := make(chan error, 1)
	go func() { served <- ss.hs.Serve(ss.handoff) }()
	var delay time.Duration // as net/http backs off temporary accept errors
	var err error
	for {
		c, aerr := ln.Accept()
		if aerr != nil {
			if ss.closing.Load() {
				err = http.ErrServerClosed
				break
			}
			if errors.Is(aerr, net.ErrClosed) {
				err = aerr
				break
			}
			// Out of file descriptors, say: wait and try again.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		fc := newFastConn(ss, c)
		ss.mu.Lock()
		if ss.closing.Load() {
			ss.mu.Unlock()
			c.Close()
			continue
		}
		ss.conns[fc] = struct{}{}
		ss.wg.Add(1)
		ss.mu.Unlock()
		go fc.serve()
	}
	if !errors.Is(err, http.ErrServerClosed) {
		ss.handoff.Close() // net/http stops serving too
	}
	if herr := <-served; err == nil && !errors.Is(herr, http.ErrServerClosed) {
		err = herr
	}
	return err
}

// Shutdown stops accepting, closes idle connections and waits for the
// requests in progress, on both paths, until ctx is done; as
// http.Server.Shutdown. The fast loops end first, so that a request one
// hands over meanwhile is still answered.
func (ss *socketServer) Shutdown(ctx context.Context) error {
	ss.stopAccepting()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for ss.closeIdle() > 0 {
		select {
		case <-ctx.Done():
			ss.closeAll()
			return errors.Join(ss.hs.Close(), ctx.Err())
		case <-t.C:
		}
	}
	ss.wg.Wait()
	return ss.hs.Shutdown(ctx) // closes the handoff listener, then net/http's connections
}

// Close closes the listener and every connection at once.
func (ss *socketServer) Close() error {
	ss.stopAccepting()
	err := ss.hs.Close()
	ss.closeAll()
	return err
}

func (ss *socketServer) stopAccepting() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closing.Store(true)
	if ss.ln != nil {
		ss.ln.Close()
	}
}

// closeIdle closes the fast connections that wait for a request and
// returns how many are left.
func (ss *socketServer) closeIdle() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for fc := range ss.conns {
		if fc.state.CompareAndSwap(connIdle, connClosed) {
			fc.c.Close()
		}
	}
	return len(ss.conns)
}

func (ss *socketServer) closeAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for fc := range ss.conns {
		fc.state.Store(connClosed)
		fc.c.Close()
	}
}

// done forgets fc, whose loop ended.
func (ss *socketServer) done(fc *fastConn) {
	ss.mu.Lock()
	delete(ss.conns, fc)
	ss.mu.Unlock()
	ss.wg.Done()
}

// handoffListener is the listener the http.Server serves: it accepts the
// connections the fast loops hand over.
type handoffListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// give hands c to net/http; false when it no longer accepts.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// handedConn is a connection handed to net/http: reads start with what
// the fast loop buffered and did not consume.
type handedConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *handedConn) Read(p []byte) (int, error) { return c.br.Read(p) }

// unwrapConn returns the socket under a handed connection, for its peer
// credentials.
func unwrapConn(c net.Conn) net.Conn {
	if hc, ok := c.(*handedConn); ok {
		return hc.Conn
	}
	return c
}

// Listen creates the API socket: a live daemon on the path is an
// error, a stale file is removed. The socket is world-connectable: reads are
// open to every local user, writes are checked by peer credentials.
func Listen(path string) (net.Listener, error) {
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("socket %s: address already in use by a running daemon", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket dir: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	// Close removes the file only while it is this listener's: a daemon
	// started while this one drained its cycles has its own there.
	ln.SetUnlinkOnClose(false)
	own, err := os.Lstat(path)
	if err == nil {
		err = os.Chmod(path, 0o666)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return &socketListener{UnixListener: ln, path: path, own: own}, nil
}

// socketListener is the API socket's listener; see Listen.
type socketListener struct {
	*net.UnixListener
	path string
	own  os.FileInfo
	once sync.Once
}

func (l *socketListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() { removeOwnSocket(l.path, l.own) })
	return err
}

// removeOwnSocket removes path if it is still the file own describes.
func removeOwnSocket(path string, own os.FileInfo) {
	if fi, err := os.Lstat(path); err == nil && os.SameFile(fi, own) {
		os.Remove(path)
	}
}
