package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/store/storetest"
)

// spanBatch is batch i of n spans: a JSON array the store keeps as is.
func spanBatch(i, n int) store.SpanBatch {
	parts := make([]string, n)
	for k := range parts {
		parts[k] = fmt.Sprintf(`{"id":%d,"pipeline":"p","iteration":%d,"kernel":"k%d","start_ns":%d,"end_ns":%d}`, k+1, i, k%3, k*10, k*10+5)
	}
	return store.SpanBatch{At: at(i), Count: n, Spans: []byte("[" + strings.Join(parts, ",") + "]")}
}

func TestSpansRoundTrip(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if got, err := s.SpanBatches("infer"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("SpanBatches of a pipeline never written = %v, %v, want empty", got, err)
	}
	var want []store.SpanBatch
	for i := range 3 {
		b := spanBatch(i, 2+i)
		if a, err := s.AddSpans("infer", b, store.SpanRetention{Spans: 100, Batches: 10}); err != nil || a != (store.SpansAdded{Seq: uint64(i + 1)}) {
			t.Fatalf("AddSpans = %+v, %v", a, err)
		}
		b.Seq = uint64(i + 1)
		want = append(want, b)
	}
	if _, err := s.AddSpans("train", spanBatch(9, 1), store.SpanRetention{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SpanBatches("infer")
	if err != nil || len(got) != len(want) {
		t.Fatalf("SpanBatches(infer) = %d batches, %v, want %d", len(got), err, len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Count != want[i].Count || !got[i].At.Equal(want[i].At) || string(got[i].Spans) != string(want[i].Spans) {
			t.Errorf("batch %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, err := s.SpanBatches("train"); err != nil || len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("SpanBatches(train) = %+v, %v, want its own batch 1", got, err)
	}
}

func TestSpansRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		keep   store.SpanRetention
		counts []int // spans per batch, added in order
		kept   []uint64
		// dropped by the last AddSpans
		droppedBatches, droppedSpans int
	}{
		{name: "spans", keep: store.SpanRetention{Spans: 10}, counts: []int{4, 4, 4}, kept: []uint64{2, 3}, droppedBatches: 1, droppedSpans: 4},
		{name: "spans exact", keep: store.SpanRetention{Spans: 12}, counts: []int{4, 4, 4}, kept: []uint64{1, 2, 3}},
		{name: "batches", keep: store.SpanRetention{Batches: 2}, counts: []int{1, 1, 1, 1}, kept: []uint64{3, 4}, droppedBatches: 1, droppedSpans: 1},
		{name: "newest kept even when over", keep: store.SpanRetention{Spans: 3}, counts: []int{2, 2, 9}, kept: []uint64{3}, droppedBatches: 1, droppedSpans: 2},
		{name: "several at once", keep: store.SpanRetention{Spans: 5}, counts: []int{1, 1, 1, 1, 5}, kept: []uint64{5}, droppedBatches: 4, droppedSpans: 4},
		{name: "no bound", counts: []int{3, 3, 3}, kept: []uint64{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			var a store.SpansAdded
			var err error
			for i, n := range tt.counts {
				if a, err = s.AddSpans("p", spanBatch(i, n), tt.keep); err != nil {
					t.Fatal(err)
				}
			}
			if a.DroppedBatches != tt.droppedBatches || a.DroppedSpans != tt.droppedSpans || a.Seq != uint64(len(tt.counts)) {
				t.Errorf("last AddSpans = %+v, want %d batches and %d spans dropped", a, tt.droppedBatches, tt.droppedSpans)
			}
			got, err := s.SpanBatches("p")
			if err != nil {
				t.Fatal(err)
			}
			var seqs []uint64
			for _, b := range got {
				seqs = append(seqs, b.Seq)
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.kept) {
				t.Errorf("kept batches %v, want %v", seqs, tt.kept)
			}
		})
	}
}

func TestSpansInvalid(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	if _, err := s.AddSpans("p", spanBatch(0, 2), store.SpanRetention{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		pipeline string
		b        store.SpanBatch
	}{
		{"no pipeline", "", spanBatch(0, 1)},
		{"bad utf-8", "p\xff", spanBatch(0, 1)},
		{"no spans", "p", store.SpanBatch{Count: 0, Spans: []byte("[]")}},
		{"not an array", "p", store.SpanBatch{Count: 1, Spans: []byte(`{"id":1}`)}},
		{"not JSON", "p", store.SpanBatch{Count: 1, Spans: []byte(`[{`)}},
	} {
		if _, err := s.AddSpans(tt.pipeline, tt.b, store.SpanRetention{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: AddSpans = %v, want ErrInvalid", tt.name, err)
		}
	}
	if got, err := s.SpanBatches("p"); err != nil || len(got) != 1 {
		t.Errorf("after refused batches SpanBatches = %d, %v, want the one stored", len(got), err)
	}
}

// TestSpansCorrupt: a batch that does not decode, or whose key disagrees
// with it, is skipped, reported and costs no other batch.
func TestSpansCorrupt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "quasim.db")
	s, err := store.Open(path, store.Options{})
	must(t, err)
	for i := range 3 {
		_, err := s.AddSpans("p", spanBatch(i, 2), store.SpanRetention{})
		must(t, err)
	}
	must(t, s.Close())
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("v1")).Bucket([]byte("spans")).Bucket([]byte("p"))
		if err := b.Put([]byte{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2}, []byte(`{"v":1,"n":2,"spans":{}}`)); err != nil {
			return err
		}
		// batch 3's record says 2 spans; its key now says 7
		v := append([]byte{}, b.Get([]byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2})...)
		if err := b.Delete([]byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2}); err != nil {
			return err
		}
		return b.Put([]byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 7}, v)
	})
	var (
		mu  sync.Mutex
		got []store.Corruption
	)
	s = openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}})
	if rep := s.CheckReport(); rep == nil || rep.Damaged() || len(rep.Corrupt) != 2 {
		t.Fatalf("check of Open = %+v, want the two corrupt batches", rep)
	}
	batches, err := s.SpanBatches("p")
	must(t, err)
	if len(batches) != 1 || batches[0].Seq != 1 {
		t.Errorf("SpanBatches = %+v, want batch 1 alone", batches)
	}
	if len(got) != 2 || got[0].Bucket != "spans" || !strings.HasSuffix(got[0].Where, `spans/"p"/2/n=2`) || !strings.HasSuffix(got[1].Where, `spans/"p"/3/n=7`) {
		t.Errorf("reported %+v, want batches 2 and 3", got)
	}
}

// TestSalvageSpans: salvage copies the spans byte for byte and keeps each
// pipeline's batch numbers going.
func TestSalvageSpans(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	before, err := store.Open(path, store.Options{ReadOnly: true})
	must(t, err)
	want := map[string][]store.SpanBatch{}
	for _, p := range []string{"infer", "train"} {
		b, err := before.SpanBatches(p)
		must(t, err)
		want[p] = b
	}
	must(t, before.Close())
	to := filepath.Join(t.TempDir(), "new.db")
	rep, err := store.Salvage(path, to, store.Options{})
	must(t, err)
	if rep.Copied["spans"] != counts["spans"] || rep.Lost["spans"] != 0 {
		t.Errorf("salvage copied %d batches, lost %d, want %d, 0", rep.Copied["spans"], rep.Lost["spans"], counts["spans"])
	}
	s := openPath(t, to, store.Options{})
	for p, w := range want {
		got, err := s.SpanBatches(p)
		must(t, err)
		if fmt.Sprint(got) != fmt.Sprint(w) || len(got) != 3 {
			t.Errorf("%s after salvage = %v, want %v", p, got, w)
		}
	}
	if _, err := s.AddSpans("infer", spanBatch(7, 1), store.SpanRetention{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SpanBatches("infer")
	must(t, err)
	if last := got[len(got)-1].Seq; last != 4 {
		t.Errorf("next batch after salvage is %d, want 4", last)
	}
}
