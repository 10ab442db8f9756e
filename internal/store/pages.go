package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"time"
)

// checkPages reads the bbolt file at path page by page, with plain reads
// and no bbolt code, and returns what is wrong with its structure: meta
// pages, free list, and every branch, leaf and overflow page reachable from
// the root. It runs before bbolt opens the file, because bbolt trusts its
// pages: a damaged one can make it panic, fault, loop forever or allocate
// without bound. A page referenced twice, out of range, of the wrong type
// or with elements outside itself is a problem; so is a file shorter than
// its pages. It stops at deadline (complete false).
//
// The layout read here is bbolt's file format, version 2 (go.etcd.io/bbolt
// internal/common: page.go, meta.go, inode.go), unchanged since boltdb.
func checkPages(path string, deadline time.Time) (problems []string, complete bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	w := &pageWalker{f: f, size: fi.Size(), deadline: deadline, seen: map[uint64]bool{}}
	w.run()
	return w.problems, !w.stopped, nil
}

const (
	pageHeaderSize  = 16
	elemSize        = 16
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	metaPageFlag    = 0x04
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	metaSize        = 64 // magic..checksum
	maxPageDepth    = 64
	maxProblems     = 20
	noFreelistPgid  = 0xffffffffffffffff
	minBoltPageSize = 512
)

// maxSalvageProblems bounds what a salvage lists: a crafted page of
// overlapping elements gives one problem per element, a file of 100 MB
// millions of them.
const maxSalvageProblems = 1000

type pageWalker struct {
	f        io.ReaderAt
	size     int64
	pageSize uint64
	hwm      uint64 // pages in use: ids below it
	deadline time.Time
	seen     map[uint64]bool
	visits   int
	problems []string
	unlisted int // problems past maxSalvageProblems, counted only
	stopped  bool

	// Salvage mode: the walk goes on past any number of problems, skipping
	// what is bad, and hands every leaf value and bucket found to these,
	// with the names of the buckets above it (bbolt's memory is not
	// involved: the bytes are the walker's own).
	salvage bool
	value   func(trail []string, k, v []byte)
	bucket  func(trail []string, name []byte, seq uint64)
}

func (w *pageWalker) problem(format string, args ...any) {
	switch {
	case len(w.problems) < maxProblems, w.salvage && len(w.problems) < maxSalvageProblems:
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	case w.salvage:
		w.unlisted++
	}
}

type bmeta struct {
	pageSize, flags     uint32
	root, freelist, hwm uint64
	txid                uint64
	ok                  bool
	why                 string
}

// readMeta reads the meta page at off.
func (w *pageWalker) readMeta(off int64) bmeta {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := w.f.ReadAt(buf, off); err != nil {
		return bmeta{why: fmt.Sprintf("unreadable: %v", err)}
	}
	le := binary.LittleEndian
	if le.Uint16(buf[8:]) != metaPageFlag {
		return bmeta{why: "not a meta page"}
	}
	m := buf[pageHeaderSize:]
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case le.Uint32(m[0:]) != boltMagic:
		return bmeta{why: "bad magic"}
	case le.Uint32(m[4:]) != boltVersion:
		return bmeta{why: fmt.Sprintf("bbolt format version %d", le.Uint32(m[4:]))}
	case le.Uint64(m[56:]) != h.Sum64():
		return bmeta{why: "checksum mismatch"}
	}
	return bmeta{
		pageSize: le.Uint32(m[8:]), flags: le.Uint32(m[12:]),
		root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]), hwm: le.Uint64(m[40:]), txid: le.Uint64(m[48:]),
		ok: true,
	}
}

func validPageSize(n uint32) bool {
	return n >= minBoltPageSize && n <= 1<<20 && n&(n-1) == 0
}

func (w *pageWalker) run() {
	m0 := w.readMeta(0)
	if m0.ok && !validPageSize(m0.pageSize) {
		m0 = bmeta{why: fmt.Sprintf("page size %d", m0.pageSize)}
	}
	// bbolt keeps two meta pages so that a torn write of one (a crash
	// mid-commit) leaves the other: it opens from whichever is valid, so
	// one bad meta page is not damage.
	var m bmeta
	switch {
	case m0.ok:
		w.pageSize = uint64(m0.pageSize)
		m = m0
		if m1 := w.readMeta(int64(w.pageSize)); m1.ok && m1.txid > m0.txid {
			m = m1
		}
	default:
		// bbolt then reads meta page 1 at the OS's page size, with which
		// it made the file; a salvage also tries every size bbolt allows.
		sizes := []uint32{uint32(os.Getpagesize())}
		if w.salvage {
			sizes = nil
			for ps := uint32(minBoltPageSize); ps <= 1<<16; ps *= 2 {
				sizes = append(sizes, ps)
			}
		}
		for _, ps := range sizes {
			if m1 := w.readMeta(int64(ps)); m1.ok && m1.pageSize == ps {
				w.pageSize, m = uint64(ps), m1
				break
			}
		}
		if !m.ok {
			w.problem("meta page 0: %s; meta page 1: not found", m0.why)
			return
		}
	}
	w.hwm = m.hwm
	if need := int64(m.hwm * w.pageSize); m.hwm > uint64(1<<62)/w.pageSize || need > w.size {
		w.problem("file is %d bytes but its pages reach %d bytes: truncated", w.size, need)
		if !w.salvage {
			return
		}
		w.hwm = uint64(w.size) / w.pageSize // read what is there
	}
	w.seen[0], w.seen[1] = true, true
	if m.freelist != noFreelistPgid && !w.salvage {
		w.freelist(m.freelist)
	}
	w.tree(m.root, 0, "root", nil)
}

// header reads page id's header: flags, count, overflow.
func (w *pageWalker) header(id uint64) (flags, count uint16, overflow uint32, ok bool) {
	var h [pageHeaderSize]byte
	if _, err := w.f.ReadAt(h[:], int64(id*w.pageSize)); err != nil {
		w.problem("page %d: unreadable: %v", id, err)
		return 0, 0, 0, false
	}
	le := binary.LittleEndian
	if got := le.Uint64(h[0:]); got != id {
		w.problem("page %d: identifies as page %d", id, got)
		return 0, 0, 0, false
	}
	return le.Uint16(h[8:]), le.Uint16(h[10:]), le.Uint32(h[12:]), true
}

// claim marks page id and its overflow pages in use, and reads them.
func (w *pageWalker) claim(id uint64, overflow uint32, what string) ([]byte, bool) {
	if id < 2 || id+uint64(overflow) >= w.hwm {
		w.problem("%s: page %d (+%d overflow) out of range [2, %d)", what, id, overflow, w.hwm)
		return nil, false
	}
	for i := id; i <= id+uint64(overflow); i++ {
		if w.seen[i] {
			w.problem("%s: page %d referenced twice", what, i)
			return nil, false
		}
		w.seen[i] = true
	}
	buf := make([]byte, (uint64(overflow)+1)*w.pageSize)
	if _, err := w.f.ReadAt(buf, int64(id*w.pageSize)); err != nil {
		w.problem("%s: page %d: unreadable: %v", what, id, err)
		return nil, false
	}
	return buf, true
}

func (w *pageWalker) freelist(id uint64) {
	if id < 2 || id >= w.hwm {
		w.problem("free list: page %d out of range [2, %d)", id, w.hwm)
		return
	}
	flags, count, overflow, ok := w.header(id)
	if !ok {
		return
	}
	if flags != freelistFlag {
		w.problem("free list: page %d has type %#x", id, flags)
		return
	}
	buf, ok := w.claim(id, overflow, "free list")
	if !ok {
		return
	}
	le := binary.LittleEndian
	n, at := uint64(count), uint64(pageHeaderSize)
	if count == 0xFFFF {
		n, at = le.Uint64(buf[at:]), at+8
	}
	if n > (uint64(len(buf))-at)/8 {
		w.problem("free list: page %d holds %d ids, room for %d", id, n, (uint64(len(buf))-at)/8)
		return
	}
	for i := range n {
		if fid := le.Uint64(buf[at+8*i:]); fid < 2 || fid >= w.hwm {
			w.problem("free list: page %d lists page %d, out of range [2, %d)", id, fid, w.hwm)
			return
		}
	}
}

// tree walks the b+tree whose page is id, of the bucket trail.
func (w *pageWalker) tree(id uint64, depth int, what string, trail []string) {
	if w.stopped || (len(w.problems) >= maxProblems && !w.salvage) {
		return
	}
	if w.tick() {
		return
	}
	if depth > maxPageDepth {
		w.problem("%s: page %d: tree deeper than %d", what, id, maxPageDepth)
		return
	}
	if id < 2 || id >= w.hwm {
		w.problem("%s: page %d out of range [2, %d)", what, id, w.hwm)
		return
	}
	flags, _, overflow, ok := w.header(id)
	if !ok {
		return
	}
	if flags != branchPageFlag && flags != leafPageFlag {
		w.problem("%s: page %d has type %#x, want branch or leaf", what, id, flags)
		return
	}
	buf, ok := w.claim(id, overflow, what)
	if !ok {
		return
	}
	w.elements(buf, id, flags, depth, what, trail)
}

// tick counts one page or element visited and reports whether the walk
// must stop: at its deadline, which it looks at every 256 visits.
func (w *pageWalker) tick() bool {
	if w.visits++; w.visits%256 == 1 && time.Now().After(w.deadline) {
		w.stopped = true
	}
	return w.stopped
}

// elements checks the elements of a branch or leaf page held in buf (an
// inline bucket's page included) and walks their children.
//
// bbolt writes an element's key and value after the element array, each
// right after the one before (common.WriteInodeToPage), so they must lie
// in order and apart: elements sharing their bytes would let one page of
// 4 KiB name 2^50 nested inline buckets, and the walk would never end.
// With the rule each byte of a page is read once per bucket it is nested
// in, and nesting is bounded by maxPageDepth.
func (w *pageWalker) elements(buf []byte, id uint64, flags uint16, depth int, what string, trail []string) {
	if depth > maxPageDepth {
		w.problem("%s: page %d: buckets nested deeper than %d", what, id, maxPageDepth)
		return
	}
	le := binary.LittleEndian
	count := int(le.Uint16(buf[10:]))
	if pageHeaderSize+count*elemSize > len(buf) {
		w.problem("%s: page %d: %d elements do not fit", what, id, count)
		return
	}
	next := uint64(pageHeaderSize + count*elemSize) // where the next element's bytes may start
	for i := range count {
		if w.tick() {
			return
		}
		e := buf[pageHeaderSize+i*elemSize:]
		base := uint64(pageHeaderSize + i*elemSize)
		if flags == branchPageFlag {
			pos, ksize, child := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:])), le.Uint64(e[8:])
			if base+pos+ksize > uint64(len(buf)) {
				w.problem("%s: branch page %d: element %d outside the page", what, id, i)
				return
			}
			if base+pos < next {
				w.problem("%s: branch page %d: element %d overlaps the elements before it", what, id, i)
				if w.salvage {
					continue // the children after it may still be sound
				}
				return
			}
			next = base + pos + ksize
			w.tree(child, depth+1, what, trail)
			continue
		}
		eflags, pos, ksize, vsize := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		if base+pos+ksize+vsize > uint64(len(buf)) {
			w.problem("%s: leaf page %d: element %d outside the page", what, id, i)
			return
		}
		if base+pos < next {
			w.problem("%s: leaf page %d: element %d overlaps the elements before it", what, id, i)
			if w.salvage {
				continue // the elements after it may still be sound
			}
			return
		}
		next = base + pos + ksize + vsize
		key := buf[base+pos : base+pos+ksize]
		val := buf[base+pos+ksize : base+pos+ksize+vsize]
		if eflags&bucketLeafFlag == 0 {
			if w.value != nil {
				w.value(trail, key, val)
			}
			continue
		}
		sub := fmt.Sprintf("%s/%q", what, key)
		if len(val) < 16 {
			w.problem("%s: bucket header of %d bytes", sub, len(val))
			continue
		}
		if w.bucket != nil {
			w.bucket(trail, key, le.Uint64(val[8:]))
		}
		subTrail := append(slices.Clone(trail), string(key))
		if root := le.Uint64(val); root != 0 {
			w.tree(root, depth+1, sub, subTrail)
			continue
		}
		inline := val[16:]
		if len(inline) < pageHeaderSize || le.Uint16(inline[8:]) != leafPageFlag {
			w.problem("%s: inline bucket is no leaf page", sub)
			continue
		}
		w.elements(inline, id, leafPageFlag, depth+1, sub, subTrail)
	}
}
