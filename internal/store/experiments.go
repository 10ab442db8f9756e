package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketExperiments holds perturbation experiments by pipeline:
// experiments/<pipeline>/<8-byte id> (schema 5).
var bucketExperiments = []byte("experiments")

// ExperimentsKept is how many experiments a pipeline keeps; storing one
// more deletes the oldest.
const ExperimentsKept = 50

// Experiment is one perturbation experiment on a pipeline (see
// internal/pipeline): the daemon's report, kept as the JSON it serves, so
// the store need not know its shape beyond being a JSON object.
type Experiment struct {
	ID       int             `json:"id"` // assigned by NewExperiment, 1-based per pipeline
	Pipeline string          `json:"pipeline"`
	At       time.Time       `json:"at"`
	Report   json.RawMessage `json:"report"`
}

type experimentRecord struct {
	V int `json:"v"`
	Experiment
}

func (r *experimentRecord) version() int { return r.V }

// decodeExperiment decodes a stored experiment; a report that is not a
// JSON object is ErrCorrupt.
func decodeExperiment(data []byte, where string) (Experiment, error) {
	var r experimentRecord
	if err := decode(data, &r, where); err != nil {
		return Experiment{}, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Report, &obj); err != nil || obj == nil {
		return Experiment{}, fmt.Errorf("decode %s: %w: report is not a JSON object", where, ErrCorrupt)
	}
	return r.Experiment, nil
}

// NewExperiment stores ex as its pipeline's next experiment, with the ID it
// assigns, and returns it; the pipeline keeps its newest ExperimentsKept.
// A missing pipeline name or a report that is not a JSON object is
// ErrInvalid, and nothing is written.
func (s *Store) NewExperiment(ex Experiment) (Experiment, error) {
	var obj map[string]json.RawMessage
	switch {
	case ex.Pipeline == "":
		return Experiment{}, fmt.Errorf("new experiment: %w: pipeline missing", ErrInvalid)
	case json.Unmarshal(ex.Report, &obj) != nil || obj == nil:
		return Experiment{}, fmt.Errorf("new experiment of %q: %w: report is not a JSON object", ex.Pipeline, ErrInvalid)
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketExperiments)
		if err != nil {
			return err
		}
		b, err := t.CreateBucketIfNotExists([]byte(ex.Pipeline))
		if err != nil {
			return fmt.Errorf("create bucket %s: %w", path(string(bucketRoot), string(bucketExperiments), quoted(ex.Pipeline)), err)
		}
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		ex.ID = int(id)
		data, err := encode(&experimentRecord{V: recordVersion, Experiment: ex})
		if err != nil {
			return err
		}
		if err := b.Put(u64(id), data); err != nil {
			return err
		}
		if id > ExperimentsKept {
			c := b.Cursor()
			for k, _ := c.First(); k != nil && len(k) == 8 && binary.BigEndian.Uint64(k) <= id-ExperimentsKept; k, _ = c.Next() {
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Experiment{}, fmt.Errorf("new experiment of %q: %w", ex.Pipeline, err)
	}
	return ex, nil
}

// Experiments returns pipeline's kept experiments, newest first, at most
// limit of them (0: all). One that does not decode is skipped and
// reported to Options.OnCorrupt.
func (s *Store) Experiments(pipeline string, limit int) ([]Experiment, error) {
	out := []Experiment{}
	err := s.view(func(tx *bolt.Tx) error {
		r, err := root(tx)
		if err != nil {
			return err
		}
		t := r.Bucket(bucketExperiments)
		if t == nil {
			return nil
		}
		b := t.Bucket([]byte(pipeline))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			where := path(string(bucketRoot), string(bucketExperiments), quoted(pipeline), keyNumber(k))
			if v == nil {
				s.corrupt(bucketExperiments, where, fmt.Errorf("%w: a bucket where a record belongs", ErrCorrupt))
				continue
			}
			ex, err := decodeExperiment(v, where)
			if err != nil {
				s.corrupt(bucketExperiments, where, err)
				continue
			}
			out = append(out, ex)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("experiments of %q: %w", pipeline, err)
	}
	return out, nil
}

// keyNumber names an 8-byte numeric key, or quotes any other.
func keyNumber(k []byte) string {
	if len(k) == 8 {
		return numbered(binary.BigEndian.Uint64(k))
	}
	return quoted(string(k))
}
