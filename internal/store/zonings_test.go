package store_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/quasim/quasim/internal/store"
)

func zoningOf(p string, configs ...string) store.Zoning {
	return store.Zoning{
		Pipeline: p, Section: "chain=conv2d,reduce budget=rel:0.001 inputs=positive",
		Jobs: []string{"conv2d|h1|48,52,5|cpu", "reduce|h2|65536|cpu"}, Configs: configs, TunedAt: at(3),
		Result: []byte(`{"state":"done","map":{"bound":0.0001}}`),
	}
}

// A stored zoning comes back as stored, after a reopen too; a second put
// replaces it; other pipelines are apart.
func TestZoningRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	s := openPath(t, path, store.Options{})
	if z, ok, err := s.Zoning("infer"); err != nil || ok {
		t.Fatalf("Zoning(infer) on an empty store = %+v, %v, %v; want none", z, ok, err)
	}
	must(t, s.PutZoning(zoningOf("infer", "a", "b")))
	must(t, s.PutZoning(zoningOf("train", "c", "d")))
	second := zoningOf("infer", "a", "e")
	must(t, s.PutZoning(second))
	must(t, s.Close())
	s = openPath(t, path, store.Options{})
	z, ok, err := s.Zoning("infer")
	if err != nil || !ok || !reflect.DeepEqual(z, second) {
		t.Fatalf("Zoning(infer) = %+v, %v, %v; want %+v", z, ok, err, second)
	}
	if z, ok, err := s.Zoning("train"); err != nil || !ok || !reflect.DeepEqual(z.Configs, []string{"c", "d"}) {
		t.Fatalf("Zoning(train) = %+v, %v, %v", z, ok, err)
	}
}

// Arguments that cannot be stored are ErrInvalid and write nothing.
func TestPutZoningInvalid(t *testing.T) {
	t.Parallel()
	s := openPath(t, filepath.Join(t.TempDir(), "q.db"), store.Options{})
	must(t, s.PutZoning(zoningOf("infer", "a")))
	for name, z := range map[string]store.Zoning{
		"no pipeline":   {Result: []byte(`{}`)},
		"long pipeline": {Pipeline: strings.Repeat("p", bolt.MaxKeySize+1), Result: []byte(`{}`)},
		"array result":  {Pipeline: "infer", Result: []byte(`[1]`)},
		"null result":   {Pipeline: "infer", Result: []byte(`null`)},
		"no result":     {Pipeline: "infer"},
	} {
		if err := s.PutZoning(z); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutZoning(%s) = %v, want ErrInvalid", name, err)
		}
	}
	if z, ok, err := s.Zoning("infer"); err != nil || !ok || z.Configs[0] != "a" {
		t.Fatalf("a refused put changed the record: %+v, %v, %v", z, ok, err)
	}
}

// Bad stored bytes: Zoning fails naming the bucket and key, the check of
// Open lists the record, and every other record still reads; a put
// replaces the bad record.
func TestZoningCorrupt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	s := openPath(t, path, store.Options{})
	must(t, s.PutZoning(zoningOf("infer", "a")))
	must(t, s.PutZoning(zoningOf("train", "b")))
	_, err := s.NewExperiment(store.Experiment{Pipeline: "builtin", At: at(1), Report: []byte(`{}`)})
	must(t, err)
	must(t, s.Close())
	bad := map[string]string{
		"infer": `{"v":1,"pipeline":"infer","result":"x"}`,
		"train": `{"v":1,"pipeline":"infer","result":{}}`,
		"other": `not json`,
	}
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("v1")).Bucket([]byte("zonings"))
		for k, v := range bad {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	var reported []store.Corruption
	s = openPath(t, path, store.Options{OnCorrupt: func(c store.Corruption) { reported = append(reported, c) }})
	if rep := s.CheckReport(); rep == nil || rep.Damaged() || len(rep.Corrupt) != 3 {
		t.Fatalf("check of Open = %+v, want the 3 corrupt zonings", rep)
	}
	for _, c := range s.CheckReport().Corrupt {
		if c.Bucket != "zonings" {
			t.Errorf("corruption %+v, want bucket zonings", c)
		}
	}
	for p, want := range map[string]string{"infer": "result is not a JSON object", "train": `record names pipeline "infer"`, "other": "invalid character"} {
		_, ok, err := s.Zoning(p)
		if !errors.Is(err, store.ErrCorrupt) || ok || !strings.Contains(err.Error(), `v1/zonings/"`+p+`"`) || !strings.Contains(err.Error(), want) {
			t.Errorf("Zoning(%s) = %v, %v; want ErrCorrupt naming v1/zonings/%q: %s", p, ok, err, p, want)
		}
	}
	if len(reported) != 3 || reported[0].Bucket != "zonings" {
		t.Errorf("reported %+v", reported)
	}
	if got, err := s.Experiments("builtin", 0); err != nil || len(got) != 1 {
		t.Errorf("experiments after the corrupt zonings: %+v, %v", got, err)
	}
	must(t, s.PutZoning(zoningOf("infer", "c")))
	if z, ok, err := s.Zoning("infer"); err != nil || !ok || z.Configs[0] != "c" {
		t.Errorf("after a put over the bad record: %+v, %v, %v", z, ok, err)
	}
}

// Salvage copies zonings byte for byte and loses only a bad one, naming it.
func TestSalvageZonings(t *testing.T) {
	t.Parallel()
	path, counts := filled(t)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("v1")).Bucket([]byte("zonings")).Put([]byte("bad"), []byte(`{"v":2}`))
	})
	to := filepath.Join(t.TempDir(), "new.db")
	rep, err := store.Salvage(path, to, store.Options{})
	must(t, err)
	if rep.Copied["zonings"] != counts["zonings"] || rep.Lost["zonings"] != 1 {
		t.Fatalf("copied %d, lost %d, want %d, 1", rep.Copied["zonings"], rep.Lost["zonings"], counts["zonings"])
	}
	found := false
	for _, c := range rep.Corrupt {
		found = found || c.Where == `v1/zonings/"bad"`
	}
	if !found {
		t.Errorf("salvage report does not name the lost zoning: %+v", rep.Corrupt)
	}
	s := openPath(t, to, store.Options{})
	z, ok, err := s.Zoning("infer")
	if err != nil || !ok || string(z.Result) != `{"map":null}` || z.Section != "chain=conv2d,reduce" {
		t.Fatalf("after salvage: %+v, %v, %v", z, ok, err)
	}
}
