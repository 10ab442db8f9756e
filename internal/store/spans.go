package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// SpanBatch is one batch of a pipeline's spans as a runtime posted it. The
// store does not read the spans: Spans is a JSON array kept byte for byte
// (the daemon validates it before it stores it, package causal reads it).
type SpanBatch struct {
	Seq   uint64          `json:"-"` // its number in the pipeline, from 1; set by AddSpans
	At    time.Time       `json:"at"`
	Count int             `json:"n"` // spans in Spans
	Spans json.RawMessage `json:"spans"`
}

// SpanRetention bounds what AddSpans keeps of a pipeline: the newest
// batches holding at most Spans spans and Batches batches in all (the
// newest batch is always kept). A value <= 0 sets no bound.
type SpanRetention struct {
	Spans   int
	Batches int
}

type spanBatchRecord struct {
	V int `json:"v"`
	SpanBatch
}

func (r *spanBatchRecord) version() int { return r.V }

// spanKey is the key of batch seq of count spans: the 8-byte seq, then
// the 4-byte count, so retention counts spans from keys alone.
func spanKey(seq uint64, count int) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 12), seq)
	return binary.BigEndian.AppendUint32(k, uint32(count))
}

func decodeSpanBatch(data []byte, where string) (SpanBatch, error) {
	var r spanBatchRecord
	if err := decode(data, &r, where); err != nil {
		return SpanBatch{}, err
	}
	if t := bytes.TrimLeft(r.Spans, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		return SpanBatch{}, fmt.Errorf("decode %s: %w: spans is not a JSON array", where, ErrCorrupt)
	}
	if r.Count < 1 || r.Count > 1<<31 {
		return SpanBatch{}, fmt.Errorf("decode %s: %w: n %d out of range", where, ErrCorrupt, r.Count)
	}
	return r.SpanBatch, nil
}

// decodeSpanRecord decodes the batch stored under key k and checks the key
// against it: its 8-byte number, then its count.
func decodeSpanRecord(k, v []byte, where string) (SpanBatch, error) {
	b, err := decodeSpanBatch(v, where)
	if err != nil {
		return b, err
	}
	if len(k) != 12 || binary.BigEndian.Uint32(k[8:]) != uint32(b.Count) {
		return SpanBatch{}, fmt.Errorf("decode %s: %w: key %x does not hold the batch's number and its count %d", where, ErrCorrupt, k, b.Count)
	}
	b.Seq = binary.BigEndian.Uint64(k[:8])
	return b, nil
}

func checkPipelineName(name string) error {
	if name == "" || !utf8.ValidString(name) || len(name) > bolt.MaxKeySize {
		return fmt.Errorf("pipeline name %q: %w: want a non-empty UTF-8 string", name, ErrInvalid)
	}
	return nil
}

// SpansAdded is what AddSpans did.
type SpansAdded struct {
	Seq            uint64 // the batch's number
	DroppedBatches int    // the oldest batches deleted to keep the retention
	DroppedSpans   int    // the spans they held
}

// AddSpans stores a batch of pipeline's spans, numbered after the last
// one, then applies keep in the same transaction: it deletes the oldest
// batches beyond keep. b.Count must be the number of spans in b.Spans (at
// least 1), and b.Spans a JSON array.
func (s *Store) AddSpans(pipeline string, b SpanBatch, keep SpanRetention) (SpansAdded, error) {
	var added SpansAdded
	if err := checkPipelineName(pipeline); err != nil {
		return added, fmt.Errorf("add spans: %w", err)
	}
	if t := bytes.TrimLeft(b.Spans, " \t\r\n"); b.Count < 1 || b.Count > 1<<31 || len(t) == 0 || t[0] != '[' {
		return added, fmt.Errorf("add spans %q: %w: want a JSON array of 1 to 2^31 spans, got %d", pipeline, ErrInvalid, b.Count)
	}
	err := s.update(func(tx *bolt.Tx) error {
		r, err := root(tx)
		if err != nil {
			return err
		}
		top := r.Bucket(bucketSpans)
		if top == nil {
			return fmt.Errorf("bucket %s: %w: missing", path(string(bucketRoot), string(bucketSpans)), ErrCorrupt)
		}
		pb, err := top.CreateBucketIfNotExists([]byte(pipeline))
		if err != nil {
			return err
		}
		pb.FillPercent = 0.95 // appended in key order
		seq, err := pb.NextSequence()
		if err != nil {
			return err
		}
		b.Seq, added.Seq = seq, seq
		data, err := encode(&spanBatchRecord{V: recordVersion, SpanBatch: b})
		if err != nil {
			return err
		}
		if err := pb.Put(spanKey(seq, b.Count), data); err != nil {
			return err
		}
		added.DroppedBatches, added.DroppedSpans, err = retainSpans(pb, keep)
		return err
	})
	if err != nil {
		return SpansAdded{}, fmt.Errorf("add spans %q: %w", pipeline, err)
	}
	return added, nil
}

// retainSpans deletes the oldest batches of pb beyond keep, reading keys
// only; the newest batch stays.
func retainSpans(pb *bolt.Bucket, keep SpanRetention) (batches, spans int, err error) {
	var old [][]byte
	n, total := 0, 0
	c := pb.Cursor()
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		count := 0
		if len(k) == 12 {
			count = int(binary.BigEndian.Uint32(k[8:]))
		}
		n++
		total += count
		if n > 1 && ((keep.Spans > 0 && total > keep.Spans) || (keep.Batches > 0 && n > keep.Batches)) {
			old = append(old, slices.Clone(k))
			spans += count
		}
	}
	for _, k := range old {
		if err := pb.Delete(k); err != nil {
			return 0, 0, err
		}
	}
	return len(old), spans, nil
}

// SpanBatches returns pipeline's stored batches, oldest first; none (not
// an error) for a pipeline never written. A batch that does not decode is
// skipped and reported to Options.OnCorrupt.
func (s *Store) SpanBatches(pipeline string) ([]SpanBatch, error) {
	out := []SpanBatch{}
	err := s.view(func(tx *bolt.Tx) error {
		r, err := root(tx)
		if err != nil {
			return err
		}
		top := r.Bucket(bucketSpans)
		if top == nil {
			return nil
		}
		pb := top.Bucket([]byte(pipeline))
		if pb == nil {
			return nil
		}
		return pb.ForEach(func(k, v []byte) error {
			where := path(string(bucketRoot), string(bucketSpans), quoted(pipeline), keyName(string(bucketSpans), k))
			if v == nil {
				s.corrupt(bucketSpans, where, fmt.Errorf("%w: a bucket where a batch belongs", ErrCorrupt))
				return nil
			}
			b, err := decodeSpanRecord(k, v, where)
			if err != nil {
				s.corrupt(bucketSpans, where, err)
				return nil
			}
			out = append(out, b)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list spans %q: %w", pipeline, err)
	}
	return out, nil
}
