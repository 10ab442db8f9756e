package spec

import (
	"bytes"
	"io"
	"sync"
)

// lineWriter hands w whole lines, one Write each: a harness's stderr
// arrives in pipe-sized chunks, and a zerolog logger makes every Write one
// event, so a chunk would split a line over two events or join several.
// A line longer than maxLine is passed in pieces of that size.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

const maxLine = 64 << 10

// lines wraps w (nil stays nil: the harness then discards stderr).
func lines(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &lineWriter{w: w}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) < maxLine {
			return len(p), nil
		}
		n := i + 1
		if i < 0 {
			n = maxLine
		}
		if _, err := l.w.Write(l.buf[:n]); err != nil {
			return len(p), err
		}
		l.buf = l.buf[n:]
	}
}
