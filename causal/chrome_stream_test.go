package causal

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// paddedTrace writes, as it is read, a trace of n complete events each
// carrying pad bytes of an argument the importer does not keep, and
// records the most heap in use seen between reads.
type paddedTrace struct {
	n, pad, next int
	buf          []byte
	maxHeap      uint64
	reads        int
}

func (p *paddedTrace) Read(b []byte) (int, error) {
	if p.reads++; p.reads%64 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		p.maxHeap = max(p.maxHeap, m.HeapAlloc)
	}
	for len(p.buf) == 0 {
		switch {
		case p.next == 0:
			p.buf = []byte(`{"traceEvents": [`)
		case p.next <= p.n:
			sep := ","
			if p.next == 1 {
				sep = ""
			}
			p.buf = fmt.Appendf(nil, `%s{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "args": {"pad": "%s"}}`,
				sep, 10*p.next, strings.Repeat("x", p.pad))
		case p.next == p.n+1:
			p.buf = []byte("]}")
		default:
			return 0, io.EOF
		}
		p.next++
	}
	k := copy(b, p.buf)
	p.buf = p.buf[k:]
	return k, nil
}

// TestImportChromeFromStreams: ImportChromeFrom reads the trace as it
// goes, so 64 MB of trace text never lie in memory at once; an error
// reading is the import's.
func TestImportChromeFromStreams(t *testing.T) {
	p := &paddedTrace{n: 64, pad: 1 << 20}
	runtime.GC()
	spans, rep, err := ImportChromeFrom(p, "p", ChromeOptions{})
	if err != nil || len(spans) != 64 || rep.Events != 64 {
		t.Fatalf("%d spans of %d events, %v", len(spans), rep.Events, err)
	}
	if p.maxHeap > 32<<20 {
		t.Errorf("heap reached %d MB while reading %d MB of trace: the text is held", p.maxHeap>>20, p.n*p.pad>>20)
	}
	broken := io.MultiReader(strings.NewReader(`[{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, `), errReader{})
	if _, _, err := ImportChromeFrom(broken, "p", ChromeOptions{}); !errors.Is(err, ErrInvalidTrace) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("a read error gave %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
