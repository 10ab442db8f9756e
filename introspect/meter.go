package introspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Window is what a meter saw over one measurement.
type Window struct {
	Seconds  float64
	EnergyMJ float64 // energy used by the device over the window; 0 = not measured
	// Throttle lists the clock-event reasons seen during the window.
	Throttle []string
	// MaxTempC is the highest temperature polled during the window, and
	// SMClockMHz, MemClockMHz and UtilPct the means of the polled clocks
	// and utilisation; 0 when not read.
	MaxTempC    float64
	SMClockMHz  float64
	MemClockMHz float64
	UtilPct     float64
}

// Throttled reports whether a transient limit (thermal, hardware slowdown,
// power brake) held the clocks down during the window, which makes its
// timings suspect (see Telemetry.Throttled).
func (w Window) Throttled() bool { return Telemetry{Throttle: w.Throttle}.Throttled() }

// Limits is the window's reasons for running below the clocks, power cap
// included (see Telemetry.Limits).
func (w Window) Limits() []string { return Telemetry{Throttle: w.Throttle}.Limits() }

// Meter measures a device's energy and throttling over measurements.
type Meter interface {
	// Begin starts a window; the returned func ends it.
	Begin() (end func() Window)
}

// RAPL meters the CPU packages' energy through the powercap counters.
type RAPL struct {
	fsys  fs.FS
	zones []string // intel-rapl:N directories
	max   []uint64 // max_energy_range_uj, for wraparound
}

// NewRAPL finds the readable package counters in fsys (the root of the file
// system); it fails when there is none, which is the usual case without
// root since Linux 5.10.
func NewRAPL(fsys fs.FS) (*RAPL, error) {
	zones, err := packageZones(fsys)
	if err != nil {
		return nil, fmt.Errorf("energy unavailable: %w", err)
	}
	r := &RAPL{fsys: fsys, zones: zones}
	for _, dir := range zones {
		m, err := readUint(fsys, path.Join(dir, "max_energy_range_uj"))
		if err != nil {
			m = 0
		}
		r.max = append(r.max, m)
	}
	return r, nil
}

// packageZones is the RAPL zones of fsys that count a CPU package's energy
// and can be read. Other top-level zones are left out: psys counts the
// whole platform, the packages included, so summing it would count them
// twice. A zone without a name (old kernels had only packages) counts.
func packageZones(fsys fs.FS) ([]string, error) {
	ents, err := fs.ReadDir(fsys, "sys/class/powercap")
	if err != nil {
		return nil, errors.New("no /sys/class/powercap (no RAPL energy counter on this machine)")
	}
	var zones []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "intel-rapl:") || strings.Count(e.Name(), ":") != 1 {
			continue
		}
		dir := path.Join("sys/class/powercap", e.Name())
		if b, err := fs.ReadFile(fsys, path.Join(dir, "name")); err == nil && !strings.HasPrefix(strings.TrimSpace(string(b)), "package") {
			continue
		}
		if _, err := readUint(fsys, path.Join(dir, "energy_uj")); err != nil {
			continue
		}
		zones = append(zones, dir)
	}
	if len(zones) == 0 {
		return nil, errors.New("no readable RAPL package counter under /sys/class/powercap (reading energy_uj usually needs root)")
	}
	return zones, nil
}

// Begin reads the counters; end reads them again and sums the packages'
// energy, counting one wraparound per counter.
func (r *RAPL) Begin() func() Window {
	t0 := time.Now()
	start := r.Read()
	return func() Window {
		w := Window{Seconds: time.Since(t0).Seconds()}
		w.EnergyMJ, _ = r.Since(start)
		return w
	}
}

// Read is the counters now, for Since.
func (r *RAPL) Read() []int64 { return r.read() }

// Since is the packages' energy in mJ from the readings prev to now
// (0 when a counter went unreadable), and the readings now: a running
// total that reads often enough for one wraparound per counter at most
// loses nothing between its reads.
func (r *RAPL) Since(prev []int64) (mj float64, now []int64) {
	now = r.read()
	var uj uint64
	for i := range r.zones {
		if prev[i] < 0 || now[i] < 0 {
			return 0, now // a counter went unreadable: no figure
		}
		a, b := uint64(prev[i]), uint64(now[i])
		if b >= a {
			uj += b - a
		} else if r.max[i] > a {
			uj += r.max[i] - a + b
		}
	}
	return float64(uj) / 1000, now
}

func (r *RAPL) read() []int64 {
	out := make([]int64, len(r.zones))
	for i, z := range r.zones {
		v, err := readUint(r.fsys, path.Join(z, "energy_uj"))
		if err != nil {
			out[i] = -1
			continue
		}
		out[i] = int64(v)
	}
	return out
}

func readUint(fsys fs.FS, name string) (uint64, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 63)
}
