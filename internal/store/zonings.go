package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketZonings holds each zoned pipeline's tuned precision map:
// zonings/<pipeline> (schema 6).
var bucketZonings = []byte("zonings")

// Zoning is a pipeline's tuned zoning as the daemon serves it, with what it
// was tuned against, so that a restart serves it again without measuring
// while those are unchanged. The store does not look inside Result beyond
// it being a JSON object.
type Zoning struct {
	Pipeline string `json:"pipeline"`
	// Section is the pipeline file's zoning section in a canonical form;
	// Jobs and Configs are the chain kernels' jobs and the configs they
	// served when the map was tuned, in chain order.
	Section string    `json:"section"`
	Jobs    []string  `json:"jobs"`
	Configs []string  `json:"configs"`
	TunedAt time.Time `json:"tuned_at"`
	// Result is the daemon's state of the zoning: the served map, its
	// certificate, the fallback maps, ...
	Result json.RawMessage `json:"result"`
}

type zoningRecord struct {
	V int `json:"v"`
	Zoning
}

func (r *zoningRecord) version() int { return r.V }

// decodeZoning decodes a stored zoning; one whose result is not a JSON
// object, or that names another pipeline than its key, is ErrCorrupt.
func decodeZoning(key, data []byte, where string) (Zoning, error) {
	var r zoningRecord
	if err := decode(data, &r, where); err != nil {
		return Zoning{}, err
	}
	if r.Pipeline != string(key) {
		return Zoning{}, fmt.Errorf("decode %s: %w: record names pipeline %q", where, ErrCorrupt, r.Pipeline)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &obj); err != nil || obj == nil {
		return Zoning{}, fmt.Errorf("decode %s: %w: result is not a JSON object", where, ErrCorrupt)
	}
	return r.Zoning, nil
}

func zoningWhere(pipeline string) string {
	return path(string(bucketRoot), string(bucketZonings), quoted(pipeline))
}

// PutZoning stores z as its pipeline's zoning, replacing the one stored.
// A missing or over-long pipeline name, or a result that is not a JSON
// object, is ErrInvalid, and nothing is written.
func (s *Store) PutZoning(z Zoning) error {
	var obj map[string]json.RawMessage
	switch {
	case z.Pipeline == "":
		return fmt.Errorf("put zoning: %w: pipeline missing", ErrInvalid)
	case len(z.Pipeline) > bolt.MaxKeySize:
		return fmt.Errorf("put zoning: %w: pipeline name of %d bytes, at most %d", ErrInvalid, len(z.Pipeline), bolt.MaxKeySize)
	case json.Unmarshal(z.Result, &obj) != nil || obj == nil:
		return fmt.Errorf("put zoning of %q: %w: result is not a JSON object", z.Pipeline, ErrInvalid)
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketZonings)
		if err != nil {
			return err
		}
		data, err := encode(&zoningRecord{V: recordVersion, Zoning: z})
		if err != nil {
			return err
		}
		return t.Put([]byte(z.Pipeline), data)
	})
	if err != nil {
		return fmt.Errorf("put zoning of %q: %w", z.Pipeline, err)
	}
	return nil
}

// Zoning returns pipeline's stored zoning, and whether there is one. A
// record that does not decode is ErrCorrupt naming its bucket and key; it
// is reported to Options.OnCorrupt too.
func (s *Store) Zoning(pipeline string) (Zoning, bool, error) {
	var (
		z  Zoning
		ok bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketZonings)
		if err != nil {
			return err
		}
		where := zoningWhere(pipeline)
		if t.Bucket([]byte(pipeline)) != nil {
			err = fmt.Errorf("decode %s: %w: a bucket where a record belongs", where, ErrCorrupt)
		} else if v, found := get(t, []byte(pipeline)); !found {
			return nil
		} else {
			z, err = decodeZoning([]byte(pipeline), v, where)
		}
		if err != nil {
			s.corrupt(bucketZonings, where, err)
			return err
		}
		ok = true
		return nil
	})
	if err != nil {
		return Zoning{}, false, fmt.Errorf("zoning of %q: %w", pipeline, err)
	}
	return z, ok, nil
}
