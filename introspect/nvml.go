//go:build cgo

package introspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DiscoverNVIDIA asks NVML for the machine's GPUs. Without a driver it
// says so; after a failed Init it calls nothing else, which could crash.
func DiscoverNVIDIA() NVIDIA { return discover(nvml.New()) }

// initFailure words a failed Init without asking the library, which may
// not be loaded.
func initFailure(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "no NVIDIA driver found (libnvidia-ml.so could not be loaded)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "no NVIDIA driver found (the kernel driver is not loaded)"
	case nvml.ERROR_NO_PERMISSION:
		return "NVML refused access (no permission)"
	}
	return fmt.Sprintf("NVML Init failed with return code %d", int(ret))
}

func discover(lib nvml.Interface) NVIDIA {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return NVIDIA{GPUs: []GPU{}, Unavailable: initFailure(ret)}
	}
	defer lib.Shutdown()
	out, _ := describe(lib)
	return out
}

// describe reads the driver and GPUs of an initialised NVML, and the
// handles of the GPUs it lists.
func describe(lib nvml.Interface) (NVIDIA, []nvml.Device) {
	out := NVIDIA{GPUs: []GPU{}}
	var devs []nvml.Device
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		out.Driver = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		out.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		out.Unavailable = "NVML could not count the GPUs: " + ret.Error()
		return out, nil
	}
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		g := GPU{Index: i}
		g.Name, _ = dev.GetName()
		g.UUID, _ = dev.GetUUID()
		if a, ret := dev.GetArchitecture(); ret == nvml.SUCCESS {
			g.Architecture = archName(a)
		}
		if major, minor, ret := dev.GetCudaComputeCapability(); ret == nvml.SUCCESS {
			g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
		}
		if m, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryMiB = m.Total >> 20
		}
		if mw, ret := dev.GetPowerManagementLimit(); ret == nvml.SUCCESS {
			g.PowerLimitW = float64(mw) / 1000
		}
		if lo, hi, ret := dev.GetPowerManagementLimitConstraints(); ret == nvml.SUCCESS {
			g.MinPowerLimitW, g.MaxPowerLimitW = float64(lo)/1000, float64(hi)/1000
		}
		out.GPUs = append(out.GPUs, g)
		devs = append(devs, dev)
	}
	return out, devs
}

// archName names an NVML architecture.
func archName(a nvml.DeviceArchitecture) string {
	names := map[nvml.DeviceArchitecture]string{
		nvml.DEVICE_ARCH_KEPLER: "kepler", nvml.DEVICE_ARCH_MAXWELL: "maxwell", nvml.DEVICE_ARCH_PASCAL: "pascal",
		nvml.DEVICE_ARCH_VOLTA: "volta", nvml.DEVICE_ARCH_TURING: "turing", nvml.DEVICE_ARCH_AMPERE: "ampere",
		nvml.DEVICE_ARCH_ADA: "ada", nvml.DEVICE_ARCH_HOPPER: "hopper", nvml.DEVICE_ARCH_BLACKWELL: "blackwell",
	}
	if n, ok := names[a]; ok {
		return n
	}
	return fmt.Sprintf("unknown (%d)", uint32(a))
}

// GPUs is an open NVML session over the machine's GPUs, for telemetry,
// meters, idle checks and knobs; Close ends it. Nothing calls NVML after
// Close (a meter or a knob's restore that outlives the session does
// nothing), and Close first restores the knobs still applied.
type GPUs struct {
	lib  nvml.Interface
	info NVIDIA
	devs []nvml.Device

	mu      sync.RWMutex // NVML calls hold it for reading, Close and restores for writing
	closed  bool
	applied map[int]func() error // restores not yet run, by Apply call
	pending map[int]setting      // what they undo, as the journal keeps it
	nextID  int
	journal string // file of the settings not yet undone; "" for none (see Recover)
}

// OpenGPUs initialises NVML. Without a driver it fails with the reason
// and calls nothing more.
func OpenGPUs() (*GPUs, error) { return NewGPUs(nvml.New()) }

// NewGPUs is OpenGPUs over lib, such as go-nvml's mock.
func NewGPUs(lib nvml.Interface) (*GPUs, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%s", initFailure(ret))
	}
	info, devs := describe(lib)
	return &GPUs{lib: lib, info: info, devs: devs, applied: map[int]func() error{}, pending: map[int]setting{}}, nil
}

// Info is what NVML said of the machine when the session opened.
func (g *GPUs) Info() NVIDIA { return g.info }

// Close restores the knobs still applied and shuts NVML down; it returns
// what failed to be restored.
func (g *GPUs) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	var errs []error
	ids := slices.Sorted(maps.Keys(g.applied))
	for _, id := range slices.Backward(ids) { // the last applied first
		errs = append(errs, g.applied[id]()) // one that fails stays in the journal
	}
	g.applied, g.closed = nil, true
	g.lib.Shutdown()
	return errors.Join(errs...)
}

// open runs f with the session open, and reports whether it was.
func (g *GPUs) open(f func()) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return false
	}
	f()
	return true
}

// Sample reads the telemetry of GPU i (an index into Info().GPUs); after
// Close every reading is missing.
func (g *GPUs) Sample(i int) Telemetry {
	var t Telemetry
	if !g.open(func() { t = Sample(g.devs[i]) }) {
		t.Missing = []string{"power", "energy", "temperature", "sm_clock", "mem_clock", "utilization", "throttle_reasons"}
	}
	return t
}

// PowerLimitW reads the power limit of GPU i (an index into
// Info().GPUs) now, in W; Info has it as the session opened.
func (g *GPUs) PowerLimitW(i int) (w float64, ok bool) {
	g.open(func() {
		mw, ret := g.devs[i].GetPowerManagementLimit()
		w, ok = float64(mw)/1000, ret == nvml.SUCCESS
	})
	return w, ok
}

// index is the first GPU of device class class, or -1.
func (g *GPUs) index(class string) int {
	for i, gpu := range g.info.GPUs {
		if g.info.Class(gpu) == class {
			return i
		}
	}
	return -1
}

// Meter meters the first GPU of device class class; nil when there is none.
func (g *GPUs) Meter(class string) Meter {
	i := g.index(class)
	if i < 0 {
		return nil
	}
	return &gpuMeter{dev: g.devs[i], every: 20 * time.Millisecond, open: g.open}
}

// Use reports how much processes other than ours use the first GPU of
// class: where NVML keeps per-process utilisation, the others' summed SM
// utilisation over the last 2 s (ours does not count) and their pids;
// otherwise the whole device's utilisation and the pids of the other
// processes running on it. False when there is no such GPU or NVML does
// not say.
func (g *GPUs) Use(class string, ours func(pid uint32) bool) (pct float64, others []uint32, ok bool) {
	i := g.index(class)
	if i < 0 {
		return 0, nil, false
	}
	g.open(func() { pct, others, ok = use(g.devs[i], ours, time.Now()) })
	return pct, others, ok
}

func use(dev nvml.Device, ours func(pid uint32) bool, now time.Time) (pct float64, others []uint32, ok bool) {
	samples, ret := dev.GetProcessUtilization(uint64(now.Add(-2 * time.Second).UnixMicro()))
	switch ret {
	case nvml.SUCCESS:
		peak := map[uint32]uint32{}
		for _, s := range samples {
			if s.SmUtil > 0 && !ours(s.Pid) {
				peak[s.Pid] = max(peak[s.Pid], s.SmUtil)
			}
		}
		for _, pid := range slices.Sorted(maps.Keys(peak)) {
			pct += float64(peak[pid])
			others = append(others, pid)
		}
		return min(pct, 100), others, true
	case nvml.ERROR_NOT_FOUND: // no process used it since then
		return 0, nil, true
	}
	u, ret := dev.GetUtilizationRates()
	if ret != nvml.SUCCESS {
		return 0, nil, false
	}
	seen := map[uint32]bool{}
	for _, list := range []func() ([]nvml.ProcessInfo, nvml.Return){dev.GetComputeRunningProcesses, dev.GetGraphicsRunningProcesses} {
		ps, ret := list()
		if ret != nvml.SUCCESS {
			continue
		}
		for _, p := range ps {
			if !seen[p.Pid] && !ours(p.Pid) {
				seen[p.Pid] = true
				others = append(others, p.Pid)
			}
		}
	}
	return float64(u.Gpu), others, true
}

// Knobs are the device settings a config can tune, with Kernel Tuner's
// parameter names: nvml_pwr_limit (W), nvml_gr_clock and nvml_mem_clock
// (MHz, locked).
var Knobs = []string{"nvml_pwr_limit", "nvml_gr_clock", "nvml_mem_clock"}

// Apply sets the knobs in cfg (a config's parameter map; others are
// ignored) on the first GPU of class and returns the func that restores
// what it changed (once; Close restores what is still applied). Without
// the privilege (root, usually) it fails and changes nothing.
func (g *GPUs) Apply(class string, cfg map[string]any) (restore func() error, err error) {
	i := g.index(class)
	if i < 0 {
		return nil, fmt.Errorf("device %s: no such NVIDIA GPU", class)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, fmt.Errorf("device %s: the NVML session is closed", class)
	}
	for _, k := range Knobs {
		if v, ok := cfg[k]; ok {
			if _, err := knob(k, v); err != nil {
				return nil, fmt.Errorf("%s on %s: %w", k, class, err)
			}
		}
	}
	// Journal first: a crash after the change leaves what Recover undoes.
	dev := g.devs[i]
	set := setting{UUID: g.info.GPUs[i].UUID}
	if _, ok := cfg["nvml_pwr_limit"]; ok {
		old, ret := dev.GetPowerManagementLimit()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvml_pwr_limit on %s: %s", class, nvmlError(ret))
		}
		set.PowerMW = old
	}
	_, set.GrLocked = cfg["nvml_gr_clock"]
	_, set.MemLocked = cfg["nvml_mem_clock"]
	g.nextID++
	id := g.nextID
	g.pending[id] = set
	if err := g.writeJournal(); err != nil {
		delete(g.pending, id)
		return nil, fmt.Errorf("device %s: %w", class, err)
	}
	done, err := apply(dev, class, cfg, set)
	if err != nil {
		// What was set and could not be set back stays in the journal.
		if _, left, rerr := done.setBack(dev); rerr != nil {
			g.pending[id] = left
			return nil, errors.Join(err, fmt.Errorf("restoring: %w", errors.Join(errLeftChanged, rerr)), g.writeJournal())
		}
		delete(g.pending, id)
		return nil, errors.Join(err, g.writeJournal())
	}
	// Set back, it leaves the journal; what fails stays there, for Close
	// and the next start to try again.
	g.applied[id] = func() error {
		_, left, err := done.setBack(dev)
		if err != nil {
			g.pending[id] = left
			return errors.Join(err, g.writeJournal())
		}
		delete(g.pending, id)
		return g.writeJournal()
	}
	return func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		f, ok := g.applied[id]
		if !ok {
			return nil // restored already, by Close
		}
		err := f()
		if err == nil {
			delete(g.applied, id)
		}
		return err
	}, nil
}

// errLeftChanged marks a failed Apply whose partial changes could not be
// set back.
var errLeftChanged = errors.New("GPU settings left changed")

// setting is a device change not yet undone, as the journal keeps it.
type setting struct {
	UUID      string `json:"uuid"`
	PowerMW   uint32 `json:"power_limit_mw,omitempty"` // the limit to set back; 0: not changed
	GrLocked  bool   `json:"gr_clock_locked,omitempty"`
	MemLocked bool   `json:"mem_clock_locked,omitempty"`
}

// setBack undoes s on dev, the clocks first: it returns what it set back
// and what it could not (a setting with nothing changed when all is back).
func (s setting) setBack(dev nvml.Device) (done []string, left setting, err error) {
	left = setting{UUID: s.UUID}
	var errs []error
	step := func(changed bool, what string, call func() nvml.Return, keep func()) {
		if !changed {
			return
		}
		if ret := call(); ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %s: %s: %s", s.UUID, what, nvmlError(ret)))
			keep()
			return
		}
		done = append(done, "GPU "+s.UUID+": "+what)
	}
	step(s.MemLocked, "memory clocks unlocked", dev.ResetMemoryLockedClocks, func() { left.MemLocked = true })
	step(s.GrLocked, "GPU clocks unlocked", dev.ResetGpuLockedClocks, func() { left.GrLocked = true })
	step(s.PowerMW > 0, fmt.Sprintf("power limit back to %d mW", s.PowerMW),
		func() nvml.Return { return dev.SetPowerManagementLimit(s.PowerMW) }, func() { left.PowerMW = s.PowerMW })
	return done, left, errors.Join(errs...)
}

// writeJournal writes the pending settings to the journal file, or
// removes it when there are none; called with g.mu held.
func (g *GPUs) writeJournal() error {
	if g.journal == "" {
		return nil
	}
	if len(g.pending) == 0 {
		if err := os.Remove(g.journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("GPU settings journal: %w", err)
		}
		return nil
	}
	var list []setting
	for _, id := range slices.Sorted(maps.Keys(g.pending)) {
		list = append(list, g.pending[id])
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	tmp := g.journal + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("GPU settings journal: %w", err)
	}
	if err := os.Rename(tmp, g.journal); err != nil {
		return fmt.Errorf("GPU settings journal: %w", err)
	}
	return nil
}

// Recover makes path the journal of the settings Apply changes, and first
// sets back what an earlier run left in it (a daemon killed while a power
// limit or locked clocks were set): it returns what it set back. What it
// cannot set back stays in the journal for the next start. A journal it
// cannot read is moved aside to path.bad, named in the error.
func (g *GPUs) Recover(path string) (restored []string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("GPU settings journal: the NVML session is closed")
	}
	g.journal = path
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("GPU settings journal: %w", err)
	}
	var list []setting
	if err := json.Unmarshal(b, &list); err != nil {
		err = fmt.Errorf("GPU settings journal %s: %w", path, err)
		if rerr := os.Rename(path, path+".bad"); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, fmt.Errorf("%w (moved to %s; check the GPUs' power limits and clocks)", err, path+".bad")
	}
	var errs []error
	for _, set := range list {
		i := slices.IndexFunc(g.info.GPUs, func(gpu GPU) bool { return gpu.UUID == set.UUID })
		if i < 0 {
			errs = append(errs, fmt.Errorf("GPU %s is not on this machine now", set.UUID))
			g.keep(set)
			continue
		}
		done, left, err := set.setBack(g.devs[i])
		restored = append(restored, done...)
		if err != nil {
			errs = append(errs, err)
			g.keep(left)
		}
	}
	if err := g.writeJournal(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return restored, fmt.Errorf("%w (kept in %s for the next start; remove it once they are set back by hand)", errors.Join(errs...), path)
	}
	return restored, nil
}

// keep puts a setting that could not be set back into the journal; called
// with g.mu held.
func (g *GPUs) keep(set setting) {
	g.nextID++
	g.pending[g.nextID] = set
}

// apply sets the knobs of cfg on dev, checked by knob, and returns what
// it changed, as a setting: all of want, or on failure the part set before
// it (for the caller to set back). want holds the power limit to go back to.
func apply(dev nvml.Device, class string, cfg map[string]any, want setting) (done setting, err error) {
	done = setting{UUID: want.UUID}
	fail := func(k string, ret nvml.Return) (setting, error) {
		return done, fmt.Errorf("%s on %s: %s", k, class, nvmlError(ret))
	}
	if v, ok := cfg["nvml_pwr_limit"]; ok {
		v, _ := knob("nvml_pwr_limit", v)
		if ret := dev.SetPowerManagementLimit(v); ret != nvml.SUCCESS {
			return fail("nvml_pwr_limit", ret)
		}
		done.PowerMW = want.PowerMW
	}
	if v, ok := cfg["nvml_gr_clock"]; ok {
		v, _ := knob("nvml_gr_clock", v)
		if ret := dev.SetGpuLockedClocks(v, v); ret != nvml.SUCCESS {
			return fail("nvml_gr_clock", ret)
		}
		done.GrLocked = true
	}
	if v, ok := cfg["nvml_mem_clock"]; ok {
		v, _ := knob("nvml_mem_clock", v)
		if ret := dev.SetMemoryLockedClocks(v, v); ret != nvml.SUCCESS {
			return fail("nvml_mem_clock", ret)
		}
		done.MemLocked = true
	}
	return done, nil
}

// knob reads a knob's value in NVML's unit: mW for nvml_pwr_limit (given
// in W), MHz for the clocks (whole numbers).
func knob(name string, v any) (uint32, error) {
	var x float64
	switch v := v.(type) {
	case int:
		x = float64(v)
	case int64:
		x = float64(v)
	case float64:
		x = v
	default:
		return 0, fmt.Errorf("value %v (%T) is not a number", v, v)
	}
	if name == "nvml_pwr_limit" {
		x = math.Round(x * 1000)
	}
	if !(x >= 1) || x > math.MaxUint32 || x != math.Trunc(x) {
		return 0, fmt.Errorf("value %v is out of range (a power limit in W, a clock in whole MHz)", v)
	}
	return uint32(x), nil
}

// nvmlError words an NVML failure; no permission is the usual one.
func nvmlError(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_NO_PERMISSION:
		return "NVML refused: no permission (setting power limits and clocks needs root)"
	case nvml.ERROR_NOT_SUPPORTED:
		return "not supported by this GPU"
	case nvml.ERROR_INVALID_ARGUMENT:
		return "value out of the GPU's range"
	}
	return fmt.Sprintf("NVML return code %d", int(ret))
}

// gpuMeter reads the total-energy counter around a window and polls the
// throttle reasons and power during it; without the counter, energy is
// the polled power integrated over the window.
type gpuMeter struct {
	dev   nvml.Device
	every time.Duration
	open  func(func()) bool // GPUs.open: no NVML call after Close
}

func (m *gpuMeter) Begin() func() Window {
	t0 := time.Now()
	var e0 uint64
	eret := nvml.ERROR_UNINITIALIZED
	m.open(func() { e0, eret = m.dev.GetTotalEnergyConsumption() })
	var mu sync.Mutex
	reasons := map[string]bool{}
	var powerSum float64 // mW × s
	var maxTemp, clockSum, memSum, utilSum float64
	clocks, mems, utils := 0, 0, 0
	last := t0
	poll := func() {
		var r uint64
		var p, temp, clk, mem uint32
		var u nvml.Utilization
		var ret, pret, tret, cret, mret, uret nvml.Return
		if !m.open(func() {
			r, ret = m.dev.GetCurrentClocksEventReasons()
			p, pret = m.dev.GetPowerUsage()
			temp, tret = m.dev.GetTemperature(nvml.TEMPERATURE_GPU)
			clk, cret = m.dev.GetClockInfo(nvml.CLOCK_SM)
			mem, mret = m.dev.GetClockInfo(nvml.CLOCK_MEM)
			u, uret = m.dev.GetUtilizationRates()
		}) {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if tret == nvml.SUCCESS {
			maxTemp = max(maxTemp, float64(temp))
		}
		if cret == nvml.SUCCESS {
			clockSum += float64(clk)
			clocks++
		}
		if mret == nvml.SUCCESS {
			memSum += float64(mem)
			mems++
		}
		if uret == nvml.SUCCESS {
			utilSum += float64(u.Gpu)
			utils++
		}
		if ret == nvml.SUCCESS {
			for _, tr := range throttleReasons {
				if r&tr.bit != 0 {
					reasons[tr.name] = true
				}
			}
		}
		if pret == nvml.SUCCESS {
			powerSum += float64(p) * now.Sub(last).Seconds()
		}
		last = now
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(m.every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				poll()
			}
		}
	}()
	return func() Window {
		close(stop)
		<-done
		poll() // at least one look inside the window
		w := Window{Seconds: time.Since(t0).Seconds(), MaxTempC: maxTemp}
		if clocks > 0 {
			w.SMClockMHz = clockSum / float64(clocks)
		}
		if mems > 0 {
			w.MemClockMHz = memSum / float64(mems)
		}
		if utils > 0 {
			w.UtilPct = utilSum / float64(utils)
		}
		for _, tr := range throttleReasons {
			if reasons[tr.name] {
				w.Throttle = append(w.Throttle, tr.name)
			}
		}
		var e1 uint64
		ret := nvml.ERROR_UNINITIALIZED
		m.open(func() { e1, ret = m.dev.GetTotalEnergyConsumption() })
		if eret == nvml.SUCCESS && ret == nvml.SUCCESS && e1 > e0 {
			w.EnergyMJ = float64(e1 - e0)
		} else {
			// No counter, or one that did not move over a window shorter
			// than its update period: the polled power, integrated.
			w.EnergyMJ = powerSum // mW·s = mJ
		}
		return w
	}
}

// throttleReasons names the clock-event reason bits.
var throttleReasons = []struct {
	bit  uint64
	name string
}{
	{nvml.ClocksEventReasonGpuIdle, "idle"},
	{nvml.ClocksEventReasonApplicationsClocksSetting, "applications_clocks"},
	{nvml.ClocksEventReasonSwPowerCap, "sw_power_cap"},
	{nvml.ClocksThrottleReasonHwSlowdown, "hw_slowdown"},
	{nvml.ClocksEventReasonSyncBoost, "sync_boost"},
	{nvml.ClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
}

// Sample reads one Telemetry of dev. Readings the device does not
// support are listed in Missing, never guessed.
func Sample(dev nvml.Device) Telemetry {
	var t Telemetry
	var ret nvml.Return
	miss := func(what string, r nvml.Return) {
		if r != nvml.SUCCESS {
			t.Missing = append(t.Missing, what)
		}
	}
	t.PowerMW, ret = dev.GetPowerUsage()
	miss("power", ret)
	t.EnergyMJ, ret = dev.GetTotalEnergyConsumption()
	miss("energy", ret)
	t.TemperatureC, ret = dev.GetTemperature(nvml.TEMPERATURE_GPU)
	miss("temperature", ret)
	t.SMClockMHz, ret = dev.GetClockInfo(nvml.CLOCK_SM)
	miss("sm_clock", ret)
	t.MemClockMHz, ret = dev.GetClockInfo(nvml.CLOCK_MEM)
	miss("mem_clock", ret)
	u, ret := dev.GetUtilizationRates()
	miss("utilization", ret)
	t.UtilGPU, t.UtilMem = u.Gpu, u.Memory
	reasons, ret := dev.GetCurrentClocksEventReasons()
	miss("throttle_reasons", ret)
	t.ThrottleBits = reasons
	for _, r := range throttleReasons {
		if reasons&r.bit != 0 {
			t.Throttle = append(t.Throttle, r.name)
		}
	}
	return t
}
