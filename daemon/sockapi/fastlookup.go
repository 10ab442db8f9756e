package sockapi

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// fastConn is one connection on the fast loop (see socketServer).
type fastConn struct {
	ss    *socketServer
	c     net.Conn
	br    *bufio.Reader
	state atomic.Int32 // connActive, connIdle or connClosed

	out     []byte // the response being written
	key     []byte // the answer cache's key of the request
	scratch []byte // the request's unescaped query values
	date    []byte // the Date header's value, for dateSec
	dateSec int64
	kernel  string // the kernel named last: a name asked again is not copied again
	host    string // the Host named last, and whether validHost takes it
	hostOK  bool
	ctx     context.Context // the requests' base context, made on first use

	// For the lookups the handler answers, made on first use.
	hb bytes.Reader
	hr *bufio.Reader
	w  *bufferedResponse
}

const (
	connActive int32 = iota
	connIdle
	connClosed
)

// fastBufSize bounds the request head the fast loop reads; a longer one
// goes to net/http, whose bound is the server's MaxHeaderBytes.
const fastBufSize = 4096

var fastConns = sync.Pool{New: func() any {
	return &fastConn{
		br:      bufio.NewReaderSize(nil, fastBufSize),
		out:     make([]byte, 0, 4096),
		key:     make([]byte, 0, 256),
		scratch: make([]byte, 0, fastBufSize),
	}
}}

func newFastConn(ss *socketServer, c net.Conn) *fastConn {
	fc := fastConns.Get().(*fastConn)
	fc.ss, fc.c = ss, c
	fc.br.Reset(c)
	fc.state.Store(connActive)
	return fc
}

// release returns fc to the pool; its bufio.Reader is not the handed
// connection's.
func (fc *fastConn) release() {
	fc.br.Reset(nil)
	fc.ss, fc.c, fc.ctx = nil, nil, nil
	fc.kernel, fc.host, fc.hostOK = "", "", false
	if cap(fc.out) > 1<<16 {
		fc.out = make([]byte, 0, 4096) // a large error answer is not kept
	}
	if fc.w != nil {
		fc.hr.Reset(nil)
		fc.w.reset()
		if fc.w.body.Cap() > 1<<16 {
			fc.w.body = bytes.Buffer{}
		}
	}
	fastConns.Put(fc)
}

// outcome is what the fast loop did with a request.
type outcome int

const (
	answered     outcome = iota // answered; wait for the next request
	answeredLast                // answered; close the connection
	handOver                    // not answered: hand the connection to net/http
	broken                      // the connection failed: close it
)

func (fc *fastConn) serve() {
	handed := fc.loop()
	fc.ss.done(fc) // before fc changes: Shutdown and Close read fc.c
	if handed {
		fc.br = bufio.NewReaderSize(nil, fastBufSize) // the handed connection keeps the old one
	} else {
		fc.c.Close()
	}
	fc.release()
}

// loop serves requests until the connection ends (false) or is handed
// over (true).
func (fc *fastConn) loop() bool {
	hs := fc.ss.hs
	first := true
	for {
		// Idle until a request starts, as net/http's keep-alive wait.
		fc.state.Store(connIdle)
		if fc.ss.closing.Load() && fc.state.CompareAndSwap(connIdle, connClosed) {
			return false
		}
		if first {
			fc.deadline(fc.headerTimeout())
		} else if hs.IdleTimeout != 0 {
			fc.deadline(hs.IdleTimeout)
		} else {
			fc.deadline(hs.ReadTimeout)
		}
		_, err := fc.br.Peek(1)
		if !fc.state.CompareAndSwap(connIdle, connActive) || err != nil {
			return false
		}
		first = false
		head, err := fc.readHead()
		var o outcome
		switch {
		case err != nil && fc.br.Buffered() == 0:
			return false
		case err != nil || head == nil:
			o = handOver // net/http reads what is buffered and says what is wrong
		default:
			o = fc.handle(head)
		}
		switch o {
		case answeredLast, broken:
			return false
		case handOver:
			fc.ss.handed.Add(1)
			return fc.ss.handoff.give(&handedConn{Conn: fc.c, br: fc.br})
		}
	}
}

// deadline sets the read deadline d from now; none when d is 0.
func (fc *fastConn) deadline(d time.Duration) {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	fc.c.SetReadDeadline(t)
}

// headerTimeout bounds the reading of a request head, as net/http's
// readHeaderTimeout.
func (fc *fastConn) headerTimeout() time.Duration {
	if d := fc.ss.hs.ReadHeaderTimeout; d != 0 {
		return d
	}
	return fc.ss.hs.ReadTimeout
}

// readHead returns the request head (the request line and headers up to
// and including the empty line), left in the reader; nil when net/http
// must read it: too long, or a line ending in a bare LF.
func (fc *fastConn) readHead() ([]byte, error) {
	timed := false
	for {
		buf, _ := fc.br.Peek(fc.br.Buffered())
		if n := headEnd(buf); n != 0 {
			if n < 0 {
				return nil, nil
			}
			return buf[:n], nil
		}
		if len(buf) == fc.br.Size() {
			return nil, nil
		}
		if !timed {
			fc.deadline(fc.headerTimeout())
			timed = true
		}
		if _, err := fc.br.Peek(len(buf) + 1); err != nil {
			return nil, err
		}
	}
}

// headEnd is the length of the request head that starts buf: 0 when buf
// holds no end of it yet, -1 when a line ends in a bare LF.
func headEnd(buf []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return 0
		}
		i += j
		if i == 0 || buf[i-1] != '\r' {
			return -1
		}
		if i >= 3 && buf[i-2] == '\n' {
			return i + 1
		}
		i++
	}
}

// handle answers the request whose head is head, or says to hand over.
func (fc *fastConn) handle(head []byte) outcome {
	var r lookupReq
	var ok bool
	r, fc.scratch, ok = parseLookup(head, fc.scratch[:0])
	if !ok || !fc.validHost(r.host) {
		return handOver
	}
	s := fc.ss.s
	fc.key = appendAnswerKey(fc.key[:0], r.problem, r.device, r.objective, r.maxSlowdown)
	a, ok := s.cfg.Lookups.Hit(fc.kernelName(r.kernel), fc.key)
	if !ok {
		if r.hasWait {
			return handOver // a long poll blocks: net/http's, which sees the client go
		}
		return fc.runHandler(head, r.proto11)
	}
	// As cachedConfig, from the cached answer.
	if r.hasWait && len(r.wait) > 0 {
		d, err := time.ParseDuration(string(r.wait))
		if err != nil || d < 0 {
			return handOver // net/http refuses it
		}
		if d > 0 && len(r.inm) > 0 && string(r.inm) == a.ETag[0] {
			return handOver // long poll
		}
	}
	a.count()
	status := http.StatusOK
	if len(r.inm) > 0 && string(r.inm) == a.ETag[0] {
		status = http.StatusNotModified
	}
	b := appendStatusLine(fc.out[:0], r.proto11, status)
	if status == http.StatusOK {
		b = append(b, "Content-Type: application/json\r\n"...)
	}
	b = append(b, "Etag: "...)
	b = append(b, a.ETag[0]...)
	b = append(b, "\r\nQuasim-Version: "...)
	b = append(b, s.cfg.Version...)
	b = append(b, "\r\nDate: "...)
	b = append(b, fc.dateNow()...)
	b = append(b, "\r\n"...)
	if status == http.StatusOK {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(a.Body)), 10)
		b = append(b, "\r\n"...)
	}
	last := !r.proto11 || fc.ss.closing.Load()
	if last && r.proto11 {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	if status == http.StatusOK {
		b = append(b, a.Body...)
	}
	fc.out = b
	return fc.send(len(head), last)
}

// send discards the request head of n bytes and writes fc.out.
func (fc *fastConn) send(n int, last bool) outcome {
	fc.br.Discard(n)
	if _, err := fc.c.Write(fc.out); err != nil {
		return broken
	}
	if last {
		return answeredLast
	}
	return answered
}

// runHandler answers the request whose head is head with the socket's
// handler, as net/http would: a lookup the answer cache does not hold, an
// unknown kernel, a bad problem.
func (fc *fastConn) runHandler(head []byte, proto11 bool) (o outcome) {
	if fc.hr == nil {
		fc.hr = bufio.NewReaderSize(nil, fastBufSize)
		fc.w = &bufferedResponse{h: http.Header{}, sent: http.Header{}}
	}
	fc.hb.Reset(head)
	fc.hr.Reset(&fc.hb)
	req, err := http.ReadRequest(fc.hr)
	if err != nil {
		return handOver
	}
	fc.ss.handled.Add(1)
	ctx, cancel := context.WithCancel(fc.baseContext())
	defer cancel()
	req = req.WithContext(ctx)
	req.RemoteAddr = fc.c.RemoteAddr().String()
	w := fc.w
	w.reset()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				o = broken
				return
			}
			fc.ss.s.log.Error().Interface("panic", p).Str("route", "GET /v1/configs").Msg("handler panicked")
			o = broken
		}
	}()
	fc.ss.hs.Handler.ServeHTTP(w, req)
	last := !proto11 || fc.ss.closing.Load()
	fc.out = w.appendTo(fc.out[:0], proto11, last, fc.dateNow())
	return fc.send(len(head), last)
}

// baseContext is the context a request starts from, as net/http makes it
// for a connection.
func (fc *fastConn) baseContext() context.Context {
	if fc.ctx == nil {
		hs := fc.ss.hs
		ctx := context.Background()
		if hs.BaseContext != nil {
			ctx = hs.BaseContext(fc.ss.handoff)
		}
		ctx = context.WithValue(ctx, http.ServerContextKey, hs)
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, fc.c.LocalAddr())
		if hs.ConnContext != nil {
			ctx = hs.ConnContext(ctx, fc.c)
		}
		fc.ctx = ctx
	}
	return fc.ctx
}

// kernelName is b as a string, the last one's when b equals it.
func (fc *fastConn) kernelName(b []byte) string {
	if string(b) != fc.kernel {
		fc.kernel = string(b)
	}
	return fc.kernel
}

// validHost says whether guard takes Host b, and net/http too: only
// plain host characters.
func (fc *fastConn) validHost(b []byte) bool {
	if string(b) != fc.host || fc.host == "" {
		fc.host = string(b)
		fc.hostOK = validHost(fc.host)
		for _, c := range b {
			fc.hostOK = fc.hostOK && hostByte[c]
		}
	}
	return fc.hostOK
}

// dateNow is the Date header's value now, formatted once a second.
func (fc *fastConn) dateNow() []byte {
	now := time.Now()
	if sec := now.Unix(); sec != fc.dateSec || len(fc.date) == 0 {
		fc.date = now.UTC().AppendFormat(fc.date[:0], http.TimeFormat)
		fc.dateSec = sec
	}
	return fc.date
}

// appendAnswerKey appends the answer cache's key of a query, as
// cachedConfig makes it.
func appendAnswerKey(b, problem, device, objective, maxSlowdown []byte) []byte {
	b = append(b, "problem="...)
	b = append(b, problem...)
	b = append(b, "&device="...)
	b = append(b, device...)
	b = append(b, "&objective="...)
	b = append(b, objective...)
	b = append(b, "&max_slowdown="...)
	return append(b, maxSlowdown...)
}

func appendStatusLine(b []byte, proto11 bool, status int) []byte {
	if proto11 {
		b = append(b, "HTTP/1.1 "...)
	} else {
		b = append(b, "HTTP/1.0 "...)
	}
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if text := http.StatusText(status); text != "" {
		b = append(b, text...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(status), 10)
	}
	return append(b, "\r\n"...)
}

// bufferedResponse is the http.ResponseWriter of a handler the fast loop
// runs: the answer is written whole when the handler returns.
type bufferedResponse struct {
	h      http.Header
	sent   http.Header // h when the status was written
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.h }

// reset readies w for the next request.
func (w *bufferedResponse) reset() {
	clear(w.h)
	clear(w.sent)
	w.status = 0
	w.body.Reset()
}

func (w *bufferedResponse) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return // only the first final status counts, as net/http's
	}
	w.status = code
	for k, v := range w.h { // what net/http sends is the headers as they are now
		w.sent[k] = slices.Clone(v)
	}
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	return w.body.Write(p)
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// appendTo appends the response as net/http writes one whose handler
// returned: the handler's headers sorted, then Date, Content-Length and a
// sniffed Content-Type where the handler set none.
func (w *bufferedResponse) appendTo(b []byte, proto11, last bool, date []byte) []byte {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	h := w.sent
	if w.status == http.StatusNotModified {
		h = h.Clone()
		for _, k := range []string{"Content-Type", "Content-Length", "Transfer-Encoding"} {
			delete(h, k)
		}
	}
	b = appendStatusLine(b, proto11, w.status)
	hb := bytes.NewBuffer(b)
	h.Write(hb)
	b = hb.Bytes()
	if _, ok := h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = append(b, date...)
		b = append(b, "\r\n"...)
	}
	if bodyAllowed(w.status) {
		if _, ok := h["Content-Length"]; !ok {
			b = append(b, "Content-Length: "...)
			b = strconv.AppendInt(b, int64(w.body.Len()), 10)
			b = append(b, "\r\n"...)
		}
		if _, ok := h["Content-Type"]; !ok && w.body.Len() > 0 {
			b = append(b, "Content-Type: "...)
			b = append(b, http.DetectContentType(w.body.Bytes())...)
			b = append(b, "\r\n"...)
		}
	}
	if last && proto11 {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	if bodyAllowed(w.status) {
		b = append(b, w.body.Bytes()...)
	}
	return b
}
