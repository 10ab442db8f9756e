//go:build cgo

package tuner

import (
	"context"
	"crypto/ed25519"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/store/storetest"
	"github.com/quasim/quasim/introspect"
)

// mockGPU is an NVML with one GPU whose energy counter advances 50 J per
// read and that reports the clock-event reasons reasons says.
func mockGPU(reasons func() uint64) nvml.Interface {
	var energy atomic.Uint64
	dev := &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "NVIDIA Test", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-0", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetArchitectureFunc:          func() (nvml.DeviceArchitecture, nvml.Return) { return nvml.DEVICE_ARCH_HOPPER, nvml.SUCCESS },
		GetTemperatureFunc:           func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 83, nvml.SUCCESS },
		GetClockInfoFunc:             func(nvml.ClockType) (uint32, nvml.Return) { return 1755, nvml.SUCCESS },
		GetUtilizationRatesFunc:      func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 91}, nvml.SUCCESS },
		GetMemoryInfoFunc:            func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 80 << 30}, nvml.SUCCESS },
		GetPowerManagementLimitFunc:  func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetPowerManagementLimitConstraintsFunc: func() (uint32, uint32, nvml.Return) {
			return 0, 0, nvml.ERROR_NOT_SUPPORTED
		},
		GetTotalEnergyConsumptionFunc:    func() (uint64, nvml.Return) { return energy.Add(50_000), nvml.SUCCESS },
		GetPowerUsageFunc:                func() (uint32, nvml.Return) { return 300_000, nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return reasons(), nvml.SUCCESS },
	}
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "560.1", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12060, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(int) (nvml.Device, nvml.Return) { return dev, nvml.SUCCESS },
	}
}

// A measurement taken while the GPU throttled is thrown away and taken
// again; one that throttles every time is kept and marked. Every trial
// gets the energy the meter read.
func TestThrottleRemeasure(t *testing.T) {
	var hotLeft atomic.Int32 // the next windows that throttle
	var capped atomic.Bool   // held at the power limit
	gpus, err := introspect.NewGPUs(mockGPU(func() uint64 {
		r := uint64(0)
		if hotLeft.Load() > 0 {
			r |= nvml.ClocksThrottleReasonHwThermalSlowdown
		}
		if capped.Load() {
			r |= nvml.ClocksEventReasonSwPowerCap
		}
		return r
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer gpus.Close()
	class := gpus.Info().Class(gpus.Info().GPUs[0])
	job := reduceJob(t)
	job.Key.Device = class // the builtin kernel runs on the CPU; the meter watches the mock GPU
	meter := gpus.Meter(class)
	// Each window ends hot or cool as hotLeft says, then counts down.
	counted := meterFunc(func() func() introspect.Window {
		end := meter.Begin()
		return func() introspect.Window {
			w := end()
			hotLeft.Add(-1)
			return w
		}
	})
	_, key, _ := ed25519.GenerateKey(nil)
	var measured atomic.Int32 // trials reported to the metrics
	tn := New(Config{Store: storetest.New(t), Signer: key, Cooldown: time.Millisecond, Remeasure: 2,
		Measured: func(Job, evaluate.Trial, time.Duration) { measured.Add(1) },
		Meter: func(dev string) introspect.Meter {
			if dev == class {
				return counted
			}
			return nil
		},
		NewStrategy: func(s *genome.Space, seed uint64) evolve.Strategy { return evolve.NewES(s, seed, evolve.ESOptions{}) }})

	hotLeft.Store(1)
	tr, err := tn.measure(context.Background(), job, job.Default)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Remeasured != 1 || len(tr.Throttle) != 0 || !tr.OK() {
		t.Errorf("one hot window: remeasured %d, throttle %v; want 1 and none", tr.Remeasured, tr.Throttle)
	}
	if n := measured.Load(); n != 1 {
		t.Errorf("one trial reported %d times to the metrics", n)
	}
	if tr.EnergyMJ <= 0 || tr.PowerW <= 0 || tr.MaxTempC != 83 || tr.SMClockMHz != 1755 || tr.MemClockMHz != 1755 || tr.UtilPct != 91 {
		t.Errorf("no telemetry from the meter: %+v", tr)
	}
	hotLeft.Store(10)
	tr, err = tn.measure(context.Background(), job, job.Default)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Remeasured != 2 || !slices.Equal(tr.Throttle, []string{"hw_thermal_slowdown"}) {
		t.Errorf("always hot: remeasured %d, throttle %v; want 2 and hw_thermal_slowdown", tr.Remeasured, tr.Throttle)
	}
	hotLeft.Store(0)
	tr, _ = tn.measure(context.Background(), job, job.Default)
	if tr.Remeasured != 0 || len(tr.Throttle) != 0 {
		t.Errorf("cool: %+v", tr)
	}
	// The power cap is how a power-bound kernel always runs: recorded, not
	// re-measured.
	capped.Store(true)
	tr, _ = tn.measure(context.Background(), job, job.Default)
	if tr.Remeasured != 0 || !slices.Equal(tr.Throttle, []string{"sw_power_cap"}) {
		t.Errorf("power-capped: remeasured %d, throttle %v; want 0 and sw_power_cap", tr.Remeasured, tr.Throttle)
	}
}

type meterFunc func() func() introspect.Window

func (f meterFunc) Begin() func() introspect.Window { return f() }
