package store

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// craftFile writes a bbolt file of 4 KiB pages by hand: two meta pages, an
// empty free list (page 2) and a root leaf page (page 3, with overflow
// pages when leaf needs them) holding leaf, whose element offsets the
// caller chose. It is how a test builds damage that byte flips would find
// only by luck.
func craftFile(t *testing.T, leaf []byte) string {
	t.Helper()
	const ps = 4096
	le := binary.LittleEndian
	pages := (len(leaf) + ps - 1) / ps
	file := make([]byte, (3+pages)*ps)
	for id := range 2 {
		p := file[id*ps:]
		le.PutUint64(p[0:], uint64(id))
		le.PutUint16(p[8:], metaPageFlag)
		m := p[pageHeaderSize:]
		le.PutUint32(m[0:], boltMagic)
		le.PutUint32(m[4:], boltVersion)
		le.PutUint32(m[8:], ps)
		le.PutUint64(m[16:], 3)               // root bucket's page
		le.PutUint64(m[32:], 2)               // free list
		le.PutUint64(m[40:], uint64(3+pages)) // pages in use
		le.PutUint64(m[48:], uint64(id))      // txid
		h := fnv.New64a()
		h.Write(m[:56])
		le.PutUint64(m[56:], h.Sum64())
	}
	le.PutUint64(file[2*ps:], 2)
	le.PutUint16(file[2*ps+8:], freelistFlag)
	copy(file[3*ps:], leaf)
	le.PutUint64(file[3*ps:], 3)
	le.PutUint32(file[3*ps+12:], uint32(pages-1)) // overflow
	path := filepath.Join(t.TempDir(), "quasim.db")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fanoutPage returns a leaf page (header included) of two elements, both
// naming the same bytes: a key and an inline bucket whose page is, again,
// fanoutPage(levels-1). Its bytes grow linearly with levels, the elements
// reachable through it as 2^levels.
func fanoutPage(levels int) []byte {
	le := binary.LittleEndian
	n := 2
	if levels == 0 {
		n = 0
	}
	p := make([]byte, pageHeaderSize+n*elemSize)
	le.PutUint16(p[8:], leafPageFlag)
	le.PutUint16(p[10:], uint16(n))
	if n == 0 {
		return p
	}
	val := append(make([]byte, 16), fanoutPage(levels-1)...) // bucket header: root 0 (inline), sequence 0
	data := len(p)
	for i := range n {
		e := p[pageHeaderSize+i*elemSize:]
		le.PutUint32(e[0:], bucketLeafFlag)
		le.PutUint32(e[4:], uint32(data-(pageHeaderSize+i*elemSize)))
		le.PutUint32(e[8:], 1)
		le.PutUint32(e[12:], uint32(len(val)))
	}
	return append(append(p, 'b'), val...)
}

// rootPage returns a root leaf page holding one bucket "x" whose value is
// an inline bucket of page inline.
func rootPage(inline []byte) []byte {
	le := binary.LittleEndian
	p := make([]byte, pageHeaderSize+elemSize)
	le.PutUint16(p[8:], leafPageFlag)
	le.PutUint16(p[10:], 1)
	e := p[pageHeaderSize:]
	le.PutUint32(e[0:], bucketLeafFlag)
	le.PutUint32(e[4:], elemSize)
	le.PutUint32(e[8:], 1)
	le.PutUint32(e[12:], uint32(16+len(inline)))
	return append(append(append(p, 'x'), make([]byte, 16)...), inline...)
}

// TestCheckOverlappingElements: leaf elements that share their bytes make
// a page of 4 KiB name 2^50 nested buckets. The walk once visited every one
// (it would not end, and the time bound was not looked at inside a page);
// now elements must lie in order, each after the last, so such a file is
// refused at once, and Salvage reads each byte once.
func TestCheckOverlappingElements(t *testing.T) {
	t.Parallel()
	path := craftFile(t, rootPage(fanoutPage(50)))
	type result struct {
		rep  *Report
		err  error
		srep *SalvageReport
		serr error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.rep, r.err = CheckFile(path, Options{CheckTimeout: time.Second})
		r.srep, r.serr = Salvage(path, filepath.Join(t.TempDir(), "new.db"), Options{})
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute): // only a check that does not end waits this out
		t.Fatal("CheckFile and Salvage of a 16 KiB file did not return in 2 minutes")
	}
	if r.err != nil || !r.rep.Complete || !r.rep.Damaged() {
		t.Fatalf("CheckFile = %+v, %v; want a complete check that finds damage", r.rep, r.err)
	}
	if !strings.Contains(strings.Join(r.rep.Problems, "\n"), "overlaps") {
		t.Errorf("problems %q do not name the overlapping element", r.rep.Problems)
	}
	if r.serr != nil {
		t.Fatalf("Salvage = %v", r.serr)
	}
	if !strings.Contains(strings.Join(r.srep.Unreadable, "\n"), "overlaps") {
		t.Errorf("Salvage's unreadable parts %q do not name the overlapping element", r.srep.Unreadable)
	}
}

// TestSalvageListsBounded: Salvage lists at most maxSalvageProblems
// unreadable parts and counts the rest; a page of elements that all
// overlap once listed one per element (millions in a crafted file of
// 100 MB).
func TestSalvageListsBounded(t *testing.T) {
	t.Parallel()
	const n = maxSalvageProblems + 200
	le := binary.LittleEndian
	leaf := make([]byte, pageHeaderSize+n*elemSize)
	le.PutUint16(leaf[8:], leafPageFlag)
	le.PutUint16(leaf[10:], n)
	for i := range n {
		e := leaf[pageHeaderSize+i*elemSize:]
		le.PutUint32(e[4:], uint32(len(leaf)-(pageHeaderSize+i*elemSize))) // every one at the same bytes
		le.PutUint32(e[8:], 1)
		le.PutUint32(e[12:], 1)
	}
	leaf = append(leaf, 'k', 'v')
	path := craftFile(t, leaf)
	rep, err := Salvage(path, filepath.Join(t.TempDir(), "new.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rep.Unreadable); got != maxSalvageProblems+1 {
		t.Fatalf("Salvage listed %d unreadable parts, want %d and a count of the rest", got, maxSalvageProblems+1)
	}
	if last := rep.Unreadable[maxSalvageProblems]; last != "and 199 more unreadable parts, not listed" {
		t.Errorf("last unreadable part = %q, want the count of the %d not listed", last, 199)
	}
}
