package sockapi

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func lookupString(r lookupReq) string {
	return fmt.Sprintf("proto11=%v kernel=%q host=%q inm=%q problem=%q device=%q objective=%q max_slowdown=%q wait=%q/%v",
		r.proto11, r.kernel, r.host, r.inm, r.problem, r.device, r.objective, r.maxSlowdown, r.wait, r.hasWait)
}

func TestParseLookup(t *testing.T) {
	for _, tc := range []struct {
		head string
		ok   bool
		want lookupReq
	}{
		{"GET /v1/configs/sgemm?problem=256%2C256,256&device=cpu%2Fa+b HTTP/1.0\r\nHost: quasimd\r\nAccept: application/json\r\n\r\n", true,
			lookupReq{kernel: []byte("sgemm"), host: []byte("quasimd"), problem: []byte("256,256,256"), device: []byte("cpu/a b")}},
		{"GET /v1/configs/k?problem=1&problem=2&wait=&x HTTP/1.1\r\nhost: localhost\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n\r\n", true,
			lookupReq{proto11: true, kernel: []byte("k"), host: []byte("localhost"), inm: []byte(`"a"`), problem: []byte("1"), wait: []byte{}, hasWait: true}},
		{"GET /v1/configs/k?problem=%2 HTTP/1.1\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},    // bad escape
		{"GET /v1/configs/k?a;b HTTP/1.1\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},           // semicolon
		{"GET /v1/configs/%6b HTTP/1.1\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},             // escaped name
		{"GET /v1/configs/k HTTP/1.1\r\n\r\n", false, lookupReq{}},                                // no Host
		{"GET /v1/configs/k HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false, lookupReq{}},          // two
		{"GET /v1/configs/k HTTP/1.1\r\nHost: quasimd\r\n Folded: x\r\n\r\n", false, lookupReq{}}, // folded
		{"GET /v1/configs/k HTTP/1.1\r\nHost: quasimd\r\nContent-Length: 0\r\n\r\n", false, lookupReq{}},
		{"GET /v1/configs/k HTTP/1.0\r\nHost: quasimd\r\nConnection: keep-alive\r\n\r\n", false, lookupReq{}},
		{"POST /v1/configs/k HTTP/1.1\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},
		{"GET /v1/configs/k HTTP/2.0\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},
		{"GET /v1/status HTTP/1.1\r\nHost: quasimd\r\n\r\n", false, lookupReq{}},
	} {
		got, _, ok := parseLookup([]byte(tc.head), nil)
		if ok != tc.ok {
			t.Errorf("parseLookup(%q) ok = %v, want %v", tc.head, ok, tc.ok)
			continue
		}
		if ok && lookupString(got) != lookupString(tc.want) {
			t.Errorf("parseLookup(%q) =\n%s, want\n%s", tc.head, lookupString(got), lookupString(tc.want))
		}
	}
	for _, tc := range []struct {
		buf  string
		want int
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET", 27},
		{"GET / HTTP/1.1\r\nHost: a\r\n", 0},
		{"GET / HTTP/1.1\nHost: a\r\n\r\n", -1},
		{"\r\n\r\n", 4},
		{"", 0},
	} {
		if got := headEnd([]byte(tc.buf)); got != tc.want {
			t.Errorf("headEnd(%q) = %d, want %d", tc.buf, got, tc.want)
		}
	}
}

// FuzzParseLookup checks the fast loop reads a request head as net/http
// does whenever it takes it: method, protocol, Host, If-None-Match, the
// kernel and the query values a lookup uses.
func FuzzParseLookup(f *testing.F) {
	for _, s := range []string{
		"GET /v1/configs/sgemm?problem=256,256,256 HTTP/1.1\r\nHost: quasimd\r\n\r\n",
		"GET /v1/configs/sgemm?problem=256%2C256%2C256&device=cpu%2Fa HTTP/1.0\r\nHost: quasimd\r\nAccept: application/json\r\nIf-None-Match: \"abc\"\r\n\r\n",
		"GET /v1/configs/k?problem=1&wait=30s&objective=energy&max_slowdown=1.5 HTTP/1.1\r\nHost: localhost:80\r\nConnection: keep-alive\r\n\r\n",
		"GET /v1/configs/k?a=%zz;b HTTP/1.1\r\nHost: [::1]:1\r\n\r\n",
		"GET /v1/configs/k?problem=a+b&&=&problem HTTP/1.1\r\nHOST:quasimd\t\r\nUser-Agent: x\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		n := headEnd(head)
		if n <= 0 {
			return
		}
		head = head[:n]
		r, _, ok := parseLookup(head, nil)
		if !ok {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		if err != nil {
			t.Fatalf("parseLookup takes %q, net/http refuses it: %v", head, err)
		}
		q := req.URL.Query()
		want := lookupReq{
			proto11: req.ProtoMinor == 1, kernel: []byte(strings.TrimPrefix(req.URL.Path, configsPrefix)), host: []byte(req.Host),
			problem: []byte(q.Get("problem")), device: []byte(q.Get("device")), objective: []byte(q.Get("objective")),
			maxSlowdown: []byte(q.Get("max_slowdown")), wait: []byte(q.Get("wait")), hasWait: q.Has("wait"),
			inm: []byte(req.Header.Get("If-None-Match")),
		}
		if req.Method != "GET" || req.URL.RawPath != "" || req.ContentLength != 0 || len(req.TransferEncoding) != 0 || req.Close != !r.proto11 {
			t.Fatalf("parseLookup takes %q, net/http reads %s %q length %d %v close %v", head, req.Method, req.URL, req.ContentLength, req.TransferEncoding, req.Close)
		}
		if lookupString(r) != lookupString(want) {
			t.Fatalf("%q:\nparseLookup %s\nnet/http    %s", head, lookupString(r), lookupString(want))
		}
		if !slices.Equal(appendAnswerKey(nil, r.problem, r.device, r.objective, r.maxSlowdown),
			appendAnswerKey(nil, want.problem, want.device, want.objective, want.maxSlowdown)) {
			t.Fatal("answer keys differ")
		}
	})
}
