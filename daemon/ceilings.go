package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/fileown"
	"github.com/quasim/quasim/introspect"
)

// ceilingsFile, in the state directory, keeps the roofs measured per
// device class, so a class is measured once, not at every start.
const ceilingsFile = "ceilings.json"

// probeNote starts the levels note of ceilings measured by the probe.
const probeNote = "sysfs lists no caches"

// ceilings are the roofline's roofs per device class: read from the state
// directory, measured once for a class that has none.
type ceilings struct {
	path string
	mu   sync.Mutex
	by   map[string]api.Ceilings
}

// loadCeilings reads dir's ceilings file; a missing file is no ceilings, a
// damaged one is an error the caller logs (the class is measured again).
func loadCeilings(dir string) (*ceilings, error) {
	c := &ceilings{path: filepath.Join(dir, ceilingsFile), by: map[string]api.Ceilings{}}
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &c.by)
	}
	if err != nil {
		c.by = map[string]api.Ceilings{}
		return c, fmt.Errorf("%s: %w (measured again)", c.path, err)
	}
	return c, nil
}

// get is class's ceilings, nil when not measured. A nil c has none.
func (c *ceilings) get(class string) *api.Ceilings {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.by[class]; ok {
		return &v
	}
	return nil
}

// set records class's ceilings and writes the file (temporary file, then
// rename, so a crash leaves the old file or the new one).
func (c *ceilings) set(class string, v api.Ceilings) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[class] = v
	b, err := json.MarshalIndent(c.by, "", "  ")
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("ceilings: %w", err)
	}
	if err := fileown.Owner(tmp, filepath.Dir(c.path)); err != nil {
		return fmt.Errorf("ceilings: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("ceilings: %w", err)
	}
	return nil
}

// measureCPU measures the CPU class's roofs if none are recorded, once the
// idle gate says other processes leave the CPU alone (busy returns why
// not), holding the device's lock so that no cycle measures beside it (and
// it measures beside no cycle). It takes about a second; the copy buffers
// are handed back to the OS afterwards, so an idle daemon stays small. To
// measure again, remove the class from the state directory's ceilings.json
// and restart.
func (c *ceilings) measureCPU(ctx context.Context, class string, threads int, lock func(context.Context, string) (func(), error), busy func(string) string, now func() time.Time, log zerolog.Logger) {
	if v := c.get(class); v != nil && (len(v.Levels) > 0 || strings.HasPrefix(v.LevelsNote, probeNote)) {
		return // measured (a record without levels, from before the probe, is measured again)
	}
	for logged := false; ; {
		why := busy(class)
		if why == "" {
			break
		}
		if !logged {
			log.Info().Str("busy", why).Msg("ceilings wait for an idle CPU")
			logged = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
	unlock, err := lock(ctx, class)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("ceilings not measured")
		}
		return
	}
	defer unlock()
	caches, cerr := introspect.ReadCaches(os.DirFS("/"))
	if cerr != nil {
		// No cache sizes to place jobs by: a copy probe at set working
		// sets stands in, so no job is placed against memory's roof alone.
		caches = introspect.ProbeCaches()
	}
	r, err := introspect.MeasureCeilings(ctx, introspect.CeilingOptions{Threads: max(threads, 1), Time: 60 * time.Millisecond, Reps: 5, Caches: caches})
	debug.FreeOSMemory()
	if err != nil {
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("ceilings not measured")
		}
		return
	}
	v := api.Ceilings{GFLOPS: r.GFLOPS, GFLOPSThread: r.GFLOPSThread, BandwidthGBs: r.BandwidthGBs, Threads: r.Threads, FMA: r.FMA, How: r.How, MeasuredAt: now().UTC()}
	for _, l := range r.Levels {
		v.Levels = append(v.Levels, api.CacheCeiling{Name: l.Name, Bytes: l.Bytes, BufferBytes: l.BufferBytes, BandwidthGBs: l.BandwidthGBs})
	}
	switch {
	case cerr != nil:
		v.LevelsNote = fmt.Sprintf("%s (%v): its levels are a copy probe at working sets of 32 KiB to 16 MiB, not cache sizes", probeNote, cerr)
	case len(v.Levels) == 0:
		v.LevelsNote = "no cache level measured"
	}
	if err := c.set(class, v); err != nil {
		log.Warn().Err(err).Msg("ceilings measured but not recorded")
	}
	log.Info().Str("device", class).Float64("gflops", r.GFLOPS).Float64("bandwidth_gbs", r.BandwidthGBs).Float64("took_ms", r.TookMS).Msg("roofline ceilings measured")
}
