package sockapi

import "bytes"

// lookupReq is a GET /v1/configs request as the fast loop reads it; its
// slices point into the head and the scratch buffer.
type lookupReq struct {
	proto11 bool
	kernel  []byte
	host    []byte
	inm     []byte // If-None-Match's first value
	// The query's first value of each of these keys, unescaped.
	problem, device, objective, maxSlowdown, wait []byte
	hasWait                                       bool
}

const configsPrefix = "/v1/configs/"

// parseLookup reads head, a request head ending in CRLF CRLF, as the fast
// loop takes it: GET /v1/configs/{kernel} over HTTP/1.1 or HTTP/1.0, with
// a kernel name of unreserved characters, a query whose escapes are valid,
// one Host, and no header that changes how the request or connection is
// read. ok is false for anything else (net/http reads it then). Unescaped
// query values are appended to scratch, which is returned.
func parseLookup(head, scratch []byte) (r lookupReq, out []byte, ok bool) {
	line, rest, _ := bytes.Cut(head, crlf)
	method, line, ok1 := bytes.Cut(line, sp)
	target, proto, ok2 := bytes.Cut(line, sp)
	if !ok1 || !ok2 || string(method) != "GET" {
		return r, scratch, false
	}
	switch string(proto) {
	case "HTTP/1.1":
		r.proto11 = true
	case "HTTP/1.0":
	default:
		return r, scratch, false
	}
	if !bytes.HasPrefix(target, []byte(configsPrefix)) {
		return r, scratch, false
	}
	for _, c := range target {
		if !targetByte[c] {
			return r, scratch, false
		}
	}
	path, query, _ := bytes.Cut(target, []byte("?"))
	r.kernel = path[len(configsPrefix):]
	if len(r.kernel) == 0 || string(r.kernel) == "." || string(r.kernel) == ".." {
		return r, scratch, false
	}
	for _, c := range r.kernel {
		if !unreserved(c) {
			return r, scratch, false
		}
	}
	if scratch, ok = parseQuery(&r, query, scratch); !ok {
		return r, scratch, false
	}
	hosts := 0
	for {
		var hl []byte
		hl, rest, _ = bytes.Cut(rest, crlf)
		if len(hl) == 0 {
			break
		}
		name, value, found := bytes.Cut(hl, []byte(":"))
		if !found || len(name) == 0 {
			return r, scratch, false
		}
		for _, c := range name {
			if !tokenByte[c] {
				return r, scratch, false // a space before the colon, a folded line
			}
		}
		value = bytes.Trim(value, " \t")
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return r, scratch, false
			}
		}
		switch {
		case bytes.EqualFold(name, []byte("Host")):
			hosts++
			r.host = value
		case bytes.EqualFold(name, []byte("If-None-Match")):
			if r.inm == nil {
				r.inm = value[:len(value):len(value)]
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if !r.proto11 || !bytes.EqualFold(value, []byte("keep-alive")) {
				return r, scratch, false
			}
		case bytes.EqualFold(name, []byte("Content-Length")), bytes.EqualFold(name, []byte("Transfer-Encoding")),
			bytes.EqualFold(name, []byte("Expect")), bytes.EqualFold(name, []byte("Upgrade")),
			bytes.EqualFold(name, []byte("Trailer")),
			// guard's: net/http's path refuses them.
			bytes.EqualFold(name, []byte("Origin")), bytes.EqualFold(name, []byte("Referer")):
			return r, scratch, false
		}
	}
	if hosts != 1 || len(rest) != 0 {
		return r, scratch, false
	}
	return r, scratch, true
}

// parseQuery sets r's query values from query, as url.ParseQuery and
// url.Values.Get read them; false for a query they read with an error.
func parseQuery(r *lookupReq, query, scratch []byte) ([]byte, bool) {
	var seen [5]bool
	for len(query) > 0 {
		var pair []byte
		pair, query, _ = bytes.Cut(query, []byte("&"))
		if len(pair) == 0 {
			continue
		}
		k, v, _ := bytes.Cut(pair, []byte("="))
		var ok bool
		start := len(scratch)
		if scratch, ok = appendUnescaped(scratch, k); !ok {
			return scratch, false
		}
		key := scratch[start:]
		start = len(scratch)
		if scratch, ok = appendUnescaped(scratch, v); !ok {
			return scratch, false
		}
		val := scratch[start:len(scratch):len(scratch)]
		var i int
		var dst *[]byte
		switch string(key) {
		case "problem":
			i, dst = 0, &r.problem
		case "device":
			i, dst = 1, &r.device
		case "objective":
			i, dst = 2, &r.objective
		case "max_slowdown":
			i, dst = 3, &r.maxSlowdown
		case "wait":
			i, dst = 4, &r.wait
			r.hasWait = true
		default:
			continue
		}
		if !seen[i] {
			seen[i], *dst = true, val
		}
	}
	return scratch, true
}

// appendUnescaped appends s with its query escapes undone (+ is a space),
// as url.QueryUnescape; false for a bad escape.
func appendUnescaped(b, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return b, false
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case '+':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return b, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

var (
	crlf = []byte("\r\n")
	sp   = []byte(" ")
	// targetByte: the characters the fast loop takes in a request target
	// (RFC 3986's unreserved and sub-delims but ';', and : @ / ? %).
	targetByte = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,=:@/?%")
	// tokenByte: RFC 9110's token characters, those of a header name.
	hostByte  = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._:[]")
	tokenByte = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~")
)

func byteSet(s string) (set [256]bool) {
	for _, c := range []byte(s) {
		set[c] = true
	}
	return set
}
