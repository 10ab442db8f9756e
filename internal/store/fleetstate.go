package store

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketFleet holds what this node verified of its fleet, so that a
// restart while the fleet is out of reach serves it: fleet/<record key>
// for each record, and fleet/"synced" for when the view was last in step
// with the fleet (schema 7).
var bucketFleet = []byte("fleet")

// keyFleetSynced is fleet/'s record of when the view was last in step.
var keyFleetSynced = []byte("synced")

// FleetRecord is one record of the fleet's KV bucket that this node
// verified (an offer or a revocation), byte for byte as the fleet held
// it, under its KV key.
type FleetRecord struct {
	Key  string    `json:"key"`
	Data []byte    `json:"data"`
	At   time.Time `json:"at"` // when it was stored here
}

type fleetRecord struct {
	V int `json:"v"`
	FleetRecord
}

func (r *fleetRecord) version() int { return r.V }

type fleetSynced struct {
	V      int       `json:"v"`
	Synced time.Time `json:"synced"`
}

func (r *fleetSynced) version() int { return r.V }

// decodeFleet decodes a record of fleet/: the synced time (a time.Time)
// or a FleetRecord that names its own key and holds data.
func decodeFleet(key, data []byte, where string) (any, error) {
	if bytes.Equal(key, keyFleetSynced) {
		var r fleetSynced
		if err := decode(data, &r, where); err != nil {
			return nil, err
		}
		return r.Synced, nil
	}
	var r fleetRecord
	if err := decode(data, &r, where); err != nil {
		return nil, err
	}
	if r.Key != string(key) || len(r.Data) == 0 {
		return nil, fmt.Errorf("decode %s: %w: record names key %q, holds %d bytes", where, ErrCorrupt, r.Key, len(r.Data))
	}
	return r.FleetRecord, nil
}

func fleetWhere(k []byte) string {
	return path(string(bucketRoot), string(bucketFleet), quoted(string(k)))
}

// PutFleetRecord stores r, replacing the record of its key. The bucket
// holds at most maxRecords records: a new key past that is not stored,
// and stored is false. An empty key, the reserved key "synced", a key
// over bbolt's limit or empty data is ErrInvalid.
func (s *Store) PutFleetRecord(r FleetRecord, maxRecords int) (stored bool, err error) {
	k := []byte(r.Key)
	switch {
	case len(k) == 0 || bytes.Equal(k, keyFleetSynced) || len(k) > bolt.MaxKeySize || len(r.Data) == 0:
		return false, fmt.Errorf("put fleet record %q: %w: reserved, empty or over-long key, or no data", r.Key, ErrInvalid)
	}
	err = s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketFleet)
		if err != nil {
			return err
		}
		if t.Get(k) == nil {
			n := 0
			c := t.Cursor()
			for ck, _ := c.First(); ck != nil; ck, _ = c.Next() {
				if !bytes.Equal(ck, keyFleetSynced) {
					n++
				}
			}
			if n >= maxRecords {
				return nil
			}
		}
		data, err := encode(&fleetRecord{V: recordVersion, FleetRecord: r})
		if err != nil {
			return err
		}
		stored = true
		return t.Put(k, data)
	})
	if err != nil {
		return false, fmt.Errorf("put fleet record %q: %w", r.Key, err)
	}
	return stored, nil
}

// DeleteFleetRecord removes the record of key, if any.
func (s *Store) DeleteFleetRecord(key string) error {
	if key == "" || key == string(keyFleetSynced) || len(key) > bolt.MaxKeySize {
		return nil
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketFleet)
		if err != nil {
			return err
		}
		return t.Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("delete fleet record %q: %w", key, err)
	}
	return nil
}

// SetFleetSynced records when the fleet view was last in step with the
// fleet.
func (s *Store) SetFleetSynced(at time.Time) error {
	err := s.update(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketFleet)
		if err != nil {
			return err
		}
		data, err := encode(&fleetSynced{V: recordVersion, Synced: at.UTC()})
		if err != nil {
			return err
		}
		return t.Put(keyFleetSynced, data)
	})
	if err != nil {
		return fmt.Errorf("put fleet synced time: %w", err)
	}
	return nil
}

// FleetState is every stored fleet record, by key, and when the view was
// last in step with the fleet (zero: never). A record that does not decode
// is skipped and reported to Options.OnCorrupt.
func (s *Store) FleetState() (recs []FleetRecord, synced time.Time, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		t, err := top(tx, bucketFleet)
		if err != nil {
			return err
		}
		c := t.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				s.corrupt(bucketFleet, fleetWhere(k), fmt.Errorf("%w: a bucket where a record belongs", ErrCorrupt))
				continue
			}
			rec, err := decodeFleet(k, v, fleetWhere(k))
			if err != nil {
				s.corrupt(bucketFleet, fleetWhere(k), err)
				continue
			}
			switch r := rec.(type) {
			case time.Time:
				synced = r
			case FleetRecord:
				recs = append(recs, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("fleet state: %w", err)
	}
	return recs, synced, nil
}
