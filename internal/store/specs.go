package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// PutSpec stores sp under its Name and Hash, keeping the other hashes of
// the same name; a second put of the same name and hash replaces it.
func (s *Store) PutSpec(sp Spec) error {
	if sp.Name == "" || sp.Hash == "" {
		return fmt.Errorf("put spec %q: empty name or hash: %w", sp.Name+"/"+sp.Hash, ErrInvalid)
	}
	err := s.update(func(tx *bolt.Tx) error {
		specs, err := top(tx, bucketSpecs)
		if err != nil {
			return err
		}
		b, err := specs.CreateBucketIfNotExists([]byte(sp.Name))
		if err != nil {
			return err
		}
		data, err := encode(&specRecord{V: recordVersion, Spec: sp})
		if err != nil {
			return err
		}
		return b.Put([]byte(sp.Hash), data)
	})
	if err != nil {
		return fmt.Errorf("put spec %q %s: %w", sp.Name, sp.Hash, err)
	}
	return nil
}

// Spec returns the spec name at hash, or ErrNotFound.
func (s *Store) Spec(name, hash string) (Spec, error) {
	var sp Spec
	err := s.view(func(tx *bolt.Tx) error {
		specs, err := top(tx, bucketSpecs)
		if err != nil {
			return err
		}
		b := specs.Bucket([]byte(name))
		if b == nil {
			return ErrNotFound
		}
		v := b.Get([]byte(hash))
		if v == nil {
			return ErrNotFound
		}
		sp, err = decodeSpec(v, specWhere(name, hash))
		return err
	})
	if err != nil {
		return Spec{}, fmt.Errorf("get spec %q %s: %w", name, hash, err)
	}
	return sp, nil
}

// Specs returns, for every spec name, the version with the latest Loaded
// time (the greatest hash among equal times), sorted by name. A version
// that does not decode is skipped and reported to Options.OnCorrupt.
func (s *Store) Specs() ([]Spec, error) {
	out := []Spec{}
	err := s.view(func(tx *bolt.Tx) error {
		specs, err := top(tx, bucketSpecs)
		if err != nil {
			return err
		}
		return specs.ForEachBucket(func(name []byte) error {
			var (
				latest Spec
				found  bool
			)
			err := specs.Bucket(name).ForEach(func(hash, v []byte) error {
				sp, err := decodeSpec(v, specWhere(string(name), string(hash)))
				if err != nil {
					s.corrupt(bucketSpecs, specWhere(string(name), string(hash)), err)
					return nil
				}
				if !found || !sp.Loaded.Before(latest.Loaded) {
					latest, found = sp, true
				}
				return nil
			})
			if err != nil {
				return err
			}
			if found {
				out = append(out, latest)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list specs: %w", err)
	}
	return out, nil
}

func specWhere(name, hash string) string {
	return path(string(bucketRoot), string(bucketSpecs), quoted(name), quoted(hash))
}
