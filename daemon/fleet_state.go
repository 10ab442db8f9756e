package daemon

import (
	"time"

	"github.com/quasim/quasim/fleet"
	"github.com/quasim/quasim/internal/store"
)

// What a node verified of its fleet survives a restart: each offer and
// revocation the view takes is kept in the store (fleet/, at most
// maxFleetRecords), with when the view was last in step with the fleet
// (written every fleetSyncEvery while it is, and on shutdown). At start
// they go back into the view (fleet.Client.Restore), verified again under
// the trust of that start, so a node restarted while the fleet is out of
// reach serves what it had verified; once the fleet is back, the offers
// it no longer holds go.

// maxFleetRecords bounds the fleet records kept in the store.
const maxFleetRecords = 10000

// fleetSyncEvery is how often the time the view was in step is written.
const fleetSyncEvery = time.Minute

// record is fleet.Config.OnRecord.
func (f *fleetNode) record(key string, data []byte, deleted bool) {
	var err error
	if deleted {
		err = f.st.DeleteFleetRecord(key)
	} else {
		var ok bool
		ok, err = f.st.PutFleetRecord(store.FleetRecord{Key: key, Data: data, At: time.Now()}, maxFleetRecords)
		if err == nil && !ok {
			f.log.Warn().Str("key", key).Int("max", maxFleetRecords).Msg("fleet record not kept: the state file holds the most it keeps")
		}
	}
	if err != nil {
		f.log.Error().Err(err).Str("key", key).Msg("fleet record not kept")
	}
}

// restore takes the fleet records kept in the store into the view.
func (f *fleetNode) restore() {
	recs, synced, err := f.st.FleetState()
	if err != nil {
		f.log.Error().Err(err).Msg("fleet records kept in the state file unreadable; the view starts empty")
		return
	}
	if len(recs) == 0 {
		return
	}
	rs := make([]fleet.Record, len(recs))
	for i, r := range recs {
		rs[i] = fleet.Record{Key: r.Key, Data: r.Data}
	}
	n := f.cl.Restore(rs, synced)
	f.log.Info().Int("records", n).Int("kept", len(recs)).Time("synced", synced).Msg("fleet view restored from the state file")
}

// keepSynced writes when the view was last in step, if it is now.
func (f *fleetNode) keepSynced() {
	if st := f.cl.Status(); st.Live {
		if err := f.st.SetFleetSynced(st.Synced); err != nil {
			f.log.Error().Err(err).Msg("fleet: keep the time the view was in step")
		}
	}
}
