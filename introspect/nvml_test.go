//go:build cgo

package introspect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// A failed Init is reported, and nothing else is called: the mock panics
// on any function that is not set.
func TestDiscoverInitFails(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	got := discover(lib)
	if got.Unavailable != "no NVIDIA driver found (libnvidia-ml.so could not be loaded)" || len(got.GPUs) != 0 {
		t.Errorf("discover = %+v", got)
	}
	if n := len(lib.InitCalls()); n != 1 {
		t.Errorf("Init called %d times", n)
	}
}

func fakeGPU() *mock.Device {
	return &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "NVIDIA A100-PCIE-40GB", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-1234", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 8, 0, nvml.SUCCESS },
		GetArchitectureFunc:          func() (nvml.DeviceArchitecture, nvml.Return) { return nvml.DEVICE_ARCH_AMPERE, nvml.SUCCESS },
		GetMemoryInfoFunc:            func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 40 << 30}, nvml.SUCCESS },
		GetPowerManagementLimitFunc:  func() (uint32, nvml.Return) { return 250000, nvml.SUCCESS },
		GetPowerManagementLimitConstraintsFunc: func() (uint32, uint32, nvml.Return) {
			return 150000, 250000, nvml.SUCCESS
		},
		GetPowerUsageFunc:             func() (uint32, nvml.Return) { return 187500, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) { return 123456789, nvml.SUCCESS },
		GetTemperatureFunc:            func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 71, nvml.SUCCESS },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1410, nvml.SUCCESS
			}
			return 1215, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 97, Memory: 40}, nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			return nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwThermalSlowdown, nvml.SUCCESS
		},
	}
}

func TestDiscover(t *testing.T) {
	lib := mockLib(fakeGPU())
	got := discover(lib)
	if got.Unavailable != "" || got.Driver != "550.54.15" || got.CUDA != "12.4" || len(got.GPUs) != 1 {
		t.Fatalf("discover = %+v", got)
	}
	g := got.GPUs[0]
	if g.Name != "NVIDIA A100-PCIE-40GB" || g.Architecture != "ampere" || g.ComputeCapability != "8.0" || g.MemoryMiB != 40<<10 || g.PowerLimitW != 250 || g.MinPowerLimitW != 150 {
		t.Errorf("gpu = %+v", g)
	}
	if c := got.Class(g); c != "nvidia/NVIDIA A100-PCIE-40GB/sm80/driver-550" {
		t.Errorf("class %q", c)
	}
	if len(lib.ShutdownCalls()) != 1 {
		t.Error("Shutdown not called after a successful Init")
	}
}

func TestSample(t *testing.T) {
	s := Sample(fakeGPU())
	if s.PowerMW != 187500 || s.EnergyMJ != 123456789 || s.TemperatureC != 71 || s.SMClockMHz != 1410 || s.MemClockMHz != 1215 || s.UtilGPU != 97 {
		t.Errorf("sample = %+v", s)
	}
	if !slices.Equal(s.Throttle, []string{"sw_power_cap", "hw_thermal_slowdown"}) || !s.Throttled() || len(s.Missing) != 0 {
		t.Errorf("throttle %v missing %v", s.Throttle, s.Missing)
	}
	// Unsupported readings are listed, not invented.
	dev := fakeGPU()
	dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, nvml.SUCCESS }
	s = Sample(dev)
	if !slices.Equal(s.Missing, []string{"energy"}) || s.EnergyMJ != 0 || s.Throttled() {
		t.Errorf("sample without energy = %+v", s)
	}
}

// On this machine: whatever NVML says, discovery returns, never panics.
func TestDiscoverHere(t *testing.T) {
	got := DiscoverNVIDIA()
	t.Logf("%+v", got)
	if got.Unavailable == "" && len(got.GPUs) == 0 {
		t.Log("NVML answered with no GPUs")
	}
}

func mockLib(dev *mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "550.54.15", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12040, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(int) (nvml.Device, nvml.Return) { return dev, nvml.SUCCESS },
	}
}

const a100 = "nvidia/NVIDIA A100-PCIE-40GB/sm80/driver-550"

func TestOpenGPUsInitFails(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }}
	g, err := NewGPUs(lib)
	if g != nil || err == nil || err.Error() != "no NVIDIA driver found (the kernel driver is not loaded)" {
		t.Fatalf("openGPUs = %v, %v", g, err)
	}
}

func TestGPUMeter(t *testing.T) {
	dev := fakeGPU()
	var energy atomic.Uint64
	energy.Store(1_000_000)
	dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return energy.Load(), nvml.SUCCESS }
	var hot atomic.Bool
	dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		if hot.Load() {
			return nvml.ClocksThrottleReasonHwThermalSlowdown, nvml.SUCCESS
		}
		return nvml.ClocksEventReasonGpuIdle, nvml.SUCCESS
	}
	g, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	m := g.Meter(a100)
	if m == nil || g.Meter("nvidia/other") != nil {
		t.Fatal("meter by class")
	}
	end := m.Begin()
	energy.Add(4200)
	w := end()
	if w.EnergyMJ != 4200 || w.Throttled() || w.Seconds <= 0 || w.MaxTempC != 71 || w.SMClockMHz != 1410 || w.MemClockMHz != 1215 || w.UtilPct != 97 {
		t.Errorf("cool window %+v", w)
	}
	end = m.Begin()
	hot.Store(true)
	w = end()
	if !w.Throttled() || !slices.Contains(w.Throttle, "hw_thermal_slowdown") {
		t.Errorf("hot window %+v", w)
	}
	// With a counter that did not move (a window shorter than its update
	// period) or none at all, energy is power integrated over time.
	for _, what := range []string{"a still counter", "no counter"} {
		if what == "no counter" {
			dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		}
		end = m.Begin()
		time.Sleep(50 * time.Millisecond)
		w = end()
		if want := 187.5 * w.Seconds * 1000; w.EnergyMJ < 0.5*want || w.EnergyMJ > 1.01*want {
			t.Errorf("%s: integrated energy %v mJ over %v s at 187.5 W", what, w.EnergyMJ, w.Seconds)
		}
	}
}

// Thermal and hardware slowdowns and the power brake are worth a second
// measurement; the software power cap and the benign reasons are not.
func TestThrottled(t *testing.T) {
	for _, tc := range []struct {
		reasons   []string
		throttled bool
		limits    []string
	}{
		{nil, false, nil},
		{[]string{"idle", "sync_boost", "applications_clocks"}, false, nil},
		{[]string{"sw_power_cap"}, false, []string{"sw_power_cap"}},
		{[]string{"idle", "sw_thermal_slowdown"}, true, []string{"sw_thermal_slowdown"}},
		{[]string{"hw_slowdown"}, true, []string{"hw_slowdown"}},
		{[]string{"sw_power_cap", "hw_power_brake_slowdown"}, true, []string{"sw_power_cap", "hw_power_brake_slowdown"}},
	} {
		w := Window{Throttle: tc.reasons}
		if w.Throttled() != tc.throttled || !slices.Equal(w.Limits(), tc.limits) {
			t.Errorf("%v: throttled %v, limits %v; want %v, %v", tc.reasons, w.Throttled(), w.Limits(), tc.throttled, tc.limits)
		}
	}
}

func TestGPUUse(t *testing.T) {
	dev := fakeGPU()
	dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 100}, {Pid: 4242}}, nvml.SUCCESS
	}
	dev.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	g, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	ours := func(pid uint32) bool { return pid == 100 }
	// Without per-process utilisation: the device's, and who else runs.
	dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	pct, others, ok := g.Use(a100, ours)
	if !ok || pct != 97 || !slices.Equal(others, []uint32{4242}) {
		t.Errorf("Use = %v, %v, %v", pct, others, ok)
	}
	// With it: the others' share alone, over the last 2 s; our own
	// measurement's 90% does not count.
	var since uint64
	dev.GetProcessUtilizationFunc = func(ts uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		since = ts
		return []nvml.ProcessUtilizationSample{{Pid: 100, SmUtil: 90}, {Pid: 4242, SmUtil: 3}, {Pid: 4242, SmUtil: 5}, {Pid: 7, SmUtil: 2}, {Pid: 8}}, nvml.SUCCESS
	}
	pct, others, ok = g.Use(a100, ours)
	if !ok || pct != 7 || !slices.Equal(others, []uint32{7, 4242}) {
		t.Errorf("Use with per-process samples = %v, %v, %v; want 7%% by 7 and 4242", pct, others, ok)
	}
	if ago := time.Since(time.UnixMicro(int64(since))); ago < 2*time.Second || ago > 3*time.Second {
		t.Errorf("samples asked since %v ago, want 2 s", ago)
	}
	dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_NOT_FOUND }
	if pct, others, ok := g.Use(a100, ours); !ok || pct != 0 || others != nil {
		t.Errorf("Use with no samples = %v, %v, %v; want idle", pct, others, ok)
	}
	if _, _, ok := g.Use("nvidia/none", nil); ok {
		t.Error("Use of an unknown class is ok")
	}
}

// knobs is what knobGPU's device is set to.
type knobs struct {
	limit  uint32   // power limit, mW
	locked []uint32 // locked GPU clocks; nil when not locked
}

// knobGPU is fakeGPU with a settable power limit (250 W) and GPU clocks.
func knobGPU() (*mock.Device, *knobs) {
	dev, k := fakeGPU(), &knobs{limit: 250000}
	dev.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return k.limit, nvml.SUCCESS }
	dev.SetPowerManagementLimitFunc = func(mw uint32) nvml.Return { k.limit = mw; return nvml.SUCCESS }
	dev.SetGpuLockedClocksFunc = func(lo, hi uint32) nvml.Return { k.locked = []uint32{lo, hi}; return nvml.SUCCESS }
	dev.ResetGpuLockedClocksFunc = func() nvml.Return { k.locked = nil; return nvml.SUCCESS }
	return dev, k
}

func TestApplyKnobs(t *testing.T) {
	dev, k := knobGPU()
	g, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	restore, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175), "nvml_gr_clock": int64(1200), "block": int64(32)})
	if err != nil {
		t.Fatal(err)
	}
	if k.limit != 175000 || !slices.Equal(k.locked, []uint32{1200, 1200}) {
		t.Fatalf("applied: limit %d mW, clocks %v", k.limit, k.locked)
	}
	if err := restore(); err != nil || k.limit != 250000 || k.locked != nil {
		t.Fatalf("restored: %v, limit %d mW, clocks %v", err, k.limit, k.locked)
	}
	// Without privilege nothing stays changed and the error says why.
	dev.SetGpuLockedClocksFunc = func(uint32, uint32) nvml.Return { return nvml.ERROR_NO_PERMISSION }
	if _, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175), "nvml_gr_clock": int64(1200)}); err == nil ||
		!strings.Contains(err.Error(), "nvml_gr_clock") || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("no permission: %v", err)
	}
	if k.limit != 250000 {
		t.Errorf("power limit left at %d mW after a failed apply", k.limit)
	}
	if _, err := g.Apply("nvidia/other", map[string]any{"nvml_pwr_limit": 100.0}); err == nil {
		t.Error("unknown class: no error")
	}
	// A value NVML cannot take is an error naming the knob, and sets nothing.
	dev.SetGpuLockedClocksFunc = func(lo, hi uint32) nvml.Return { k.locked = []uint32{lo, hi}; return nvml.SUCCESS }
	for _, v := range []any{"high", true, -5.0, 1200.5, 1e12} {
		if _, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175), "nvml_gr_clock": v}); err == nil || !strings.Contains(err.Error(), "nvml_gr_clock") {
			t.Errorf("nvml_gr_clock %v: %v", v, err)
		}
		if k.limit != 250000 || k.locked != nil {
			t.Errorf("nvml_gr_clock %v: limit %d mW, clocks %v changed", v, k.limit, k.locked)
		}
	}
	// A fractional power k.limit in W is a whole number of mW.
	restore, err = g.Apply(a100, map[string]any{"nvml_pwr_limit": 172.5})
	if err != nil || k.limit != 172500 {
		t.Fatalf("172.5 W: %v, limit %d mW", err, k.limit)
	}
	// Close restores what is still applied, and a restore after it (a
	// measurement outliving shutdown) calls nothing.
	shut := false
	g.lib.(*mock.Interface).ShutdownFunc = func() nvml.Return { shut = true; return nvml.SUCCESS }
	if err := g.Close(); err != nil || k.limit != 250000 || !shut {
		t.Fatalf("Close: %v, limit %d mW, shut down %v", err, k.limit, shut)
	}
	dev.SetPowerManagementLimitFunc = func(uint32) nvml.Return { panic("NVML called after Close") }
	if err := restore(); err != nil {
		t.Errorf("restore after Close: %v", err)
	}
	if s := g.Sample(0); len(s.Missing) == 0 {
		t.Errorf("Sample after Close: %+v", s)
	}
	if _, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": 200.0}); err == nil {
		t.Error("Apply after Close: no error")
	}
}

// A measurement that outlives the session (shutdown mid-measurement)
// calls NVML no more once Close has run.
func TestMeterAfterClose(t *testing.T) {
	dev := fakeGPU()
	var closed atomic.Bool
	check := func(what string) {
		if closed.Load() {
			t.Errorf("%s called after Close", what)
		}
	}
	dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { check("GetPowerUsage"); return 187500, nvml.SUCCESS }
	dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { check("GetTotalEnergyConsumption"); return 1, nvml.SUCCESS }
	dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { check("GetCurrentClocksEventReasons"); return 0, nvml.SUCCESS }
	lib := mockLib(dev)
	lib.ShutdownFunc = func() nvml.Return { closed.Store(true); return nvml.SUCCESS }
	g, err := NewGPUs(lib)
	if err != nil {
		t.Fatal(err)
	}
	end := g.Meter(a100).Begin()
	time.Sleep(30 * time.Millisecond)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the poller's ticks after Close
	if w := end(); w.Seconds <= 0 {
		t.Errorf("window %+v", w)
	}
	if _, _, ok := g.Use(a100, func(uint32) bool { return false }); ok {
		t.Error("Use after Close is ok")
	}
}

// A daemon killed while a power limit and locked clocks are set leaves a
// journal; the next session sets them back from it.
func TestKnobJournal(t *testing.T) {
	dev, k := knobGPU()
	journal := filepath.Join(t.TempDir(), "gpu-settings.json")

	g, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	if restored, err := g.Recover(journal); err != nil || restored != nil {
		t.Fatalf("Recover with no journal = %v, %v", restored, err)
	}
	restore, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("no journal while a setting is applied: %v", err)
	}
	if err := restore(); err != nil || k.limit != 250000 {
		t.Fatalf("restore: %v, limit %d", err, k.limit)
	}
	if _, err := os.Stat(journal); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("journal left after the restore: %v", err)
	}

	// Killed with both applied: nothing restores them in this session.
	if _, err := g.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175), "nvml_gr_clock": int64(1200)}); err != nil {
		t.Fatal(err)
	}
	if k.limit != 175000 || k.locked == nil {
		t.Fatalf("applied: limit %d, clocks %v", k.limit, k.locked)
	}
	next, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	restored, err := next.Recover(journal)
	if err != nil || len(restored) != 2 || k.limit != 250000 || k.locked != nil {
		t.Fatalf("Recover = %v, %v; limit %d mW, clocks %v", restored, err, k.limit, k.locked)
	}
	if _, err := os.Stat(journal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal left after recovery: %v", err)
	}

	// A setting that cannot be set back stays in the journal, in this
	// session's restore and Close and at the next start alike.
	restore, err = next.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175)})
	if err != nil {
		t.Fatal(err)
	}
	dev.SetPowerManagementLimitFunc = func(uint32) nvml.Return { return nvml.ERROR_UNKNOWN }
	if err := restore(); err == nil {
		t.Fatal("restore that failed: no error")
	}
	if err := next.Close(); err == nil {
		t.Fatal("Close that failed to restore: no error")
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("journal gone though the limit is still changed: %v", err)
	}
	third, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := third.Recover(journal); err == nil || !strings.Contains(err.Error(), "kept in "+journal) {
		t.Fatalf("Recover that failed: %v", err)
	}
	dev.SetPowerManagementLimitFunc = func(mw uint32) nvml.Return { k.limit = mw; return nvml.SUCCESS }
	fourth, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	if restored, err := fourth.Recover(journal); err != nil || len(restored) != 1 || k.limit != 250000 {
		t.Fatalf("Recover once NVML works = %v, %v; limit %d mW", restored, err, k.limit)
	}

	// A journal that cannot be read is moved aside and named; journaling
	// goes on.
	os.WriteFile(journal, []byte("{not json"), 0o600)
	if _, err := fourth.Recover(journal); err == nil || !strings.Contains(err.Error(), journal+".bad") {
		t.Errorf("bad journal: %v", err)
	}
	if b, err := os.ReadFile(journal + ".bad"); err != nil || string(b) != "{not json" {
		t.Errorf("bad journal not kept aside: %q, %v", b, err)
	}
	if _, err := fourth.Apply(a100, map[string]any{"nvml_pwr_limit": int64(175)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journal); err != nil {
		t.Errorf("no journal after a bad one: %v", err)
	}
}

// Whatever the journal holds, Recover names the file or sets back settings
// of this machine's GPUs only.
func FuzzRecover(f *testing.F) {
	f.Add([]byte(`[{"uuid":"GPU-1234","power_limit_mw":250000,"gr_clock_locked":true}]`))
	f.Add([]byte(`[{"uuid":"GPU-other","mem_clock_locked":true}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := fakeGPU()
		var sets int
		dev.SetPowerManagementLimitFunc = func(uint32) nvml.Return { sets++; return nvml.SUCCESS }
		dev.ResetGpuLockedClocksFunc = func() nvml.Return { sets++; return nvml.SUCCESS }
		dev.ResetMemoryLockedClocksFunc = func() nvml.Return { sets++; return nvml.SUCCESS }
		g, err := NewGPUs(mockLib(dev))
		if err != nil {
			t.Fatal(err)
		}
		journal := filepath.Join(t.TempDir(), "gpu-settings.json")
		if err := os.WriteFile(journal, data, 0o600); err != nil {
			t.Fatal(err)
		}
		restored, err := g.Recover(journal)
		if len(restored) != sets {
			t.Fatalf("%d settings set back, %d reported", sets, len(restored))
		}
		if err != nil && !strings.Contains(err.Error(), "GPU") {
			t.Fatalf("error names nothing: %v", err)
		}
	})
}

func TestPowerLimitNow(t *testing.T) {
	dev := fakeGPU()
	limit := uint32(250000)
	dev.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return limit, nvml.SUCCESS }
	g, err := NewGPUs(mockLib(dev))
	if err != nil {
		t.Fatal(err)
	}
	limit = 200000 // changed since the session opened
	if w, ok := g.PowerLimitW(0); !ok || w != 200 || g.Info().GPUs[0].PowerLimitW != 250 {
		t.Errorf("PowerLimitW = %v, %v; Info has %v", w, ok, g.Info().GPUs[0].PowerLimitW)
	}
	g.Close()
	if _, ok := g.PowerLimitW(0); ok {
		t.Error("PowerLimitW after Close is ok")
	}
}
