package daemon

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/quasim/quasim/internal/store"
)

// corruptRecords counts and logs the stored records listings skip because
// they do not decode: each costs itself, not the listing.
type corruptRecords struct {
	counter *prometheus.CounterVec
	log     zerolog.Logger // sampled: a damaged bucket is read at every listing
}

func newCorruptRecords(log zerolog.Logger) *corruptRecords {
	return &corruptRecords{
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quasim_store_corrupt_records_total",
			Help: "Stored records skipped by a read because they do not decode, by top-level bucket. Each read of one counts; `quasimd db check` lists them.",
		}, []string{"bucket"}),
		log: log.With().Str("component", "store").Logger().Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute}),
	}
}

// skipped is store.Options.OnCorrupt.
func (c *corruptRecords) skipped(rec store.Corruption) {
	c.counter.WithLabelValues(rec.Bucket).Inc()
	c.log.Warn().Str("bucket", rec.Bucket).Str("record", rec.Where).Err(rec.Err).Msg("corrupt record skipped; `quasimd db check` lists them, `quasimd db salvage` copies the rest")
}

// opened logs what the check of the store's Open found.
func (c *corruptRecords) opened(rep *store.Report, log zerolog.Logger) {
	if rep == nil {
		return
	}
	ev := log.Info()
	if len(rep.Corrupt) > 0 || !rep.Complete {
		ev = log.Warn()
	}
	ev.Str("path", rep.Path).Int64("bytes", rep.Size).Int("keys", rep.Keys).Dur("took", rep.Took).
		Bool("complete", rep.Complete).Int("corrupt_records", len(rep.Corrupt)).Msg("state file checked")
	for _, r := range rep.Corrupt {
		c.counter.WithLabelValues(r.Bucket).Add(0) // the series exists from the start
	}
}
