package sockapi

import (
	"net/http"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
)

// RouteProfile serves the Go runtime's profiles (heap, allocs, goroutine,
// ...), in pprof's format, to those who may write: what holds the daemon's
// memory is then `go tool pprof` away, e.g.
//
//	curl --unix-socket SOCK 'http://quasimd/debug/pprof/heap?gc=1' > heap.pb.gz
const RouteProfile = "GET /debug/pprof/{name}"

func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) {
	if !s.Writers.allowed(r.Context()) {
		WriteError(w, Permissionf("%s needs uid 0, the daemon's uid, group %s or --operator", RouteProfile, s.Writers.group))
		return
	}
	name := r.PathValue("name")
	p := pprof.Lookup(name)
	if p == nil {
		WriteError(w, NotFoundf("no profile %q (have heap, allocs, goroutine, threadcreate, block, mutex)", name))
		return
	}
	if r.URL.Query().Get("gc") == "1" {
		goruntime.GC()
	}
	debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	p.WriteTo(w, debug)
}
