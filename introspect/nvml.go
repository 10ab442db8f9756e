//go:build cgo

package introspect

import (
	"fmt"

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
	out := NVIDIA{GPUs: []GPU{}}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		out.Unavailable = initFailure(ret)
		return out
	}
	defer lib.Shutdown()
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		out.Driver = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		out.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		out.Unavailable = "NVML could not count the GPUs: " + ret.Error()
		return out
	}
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		g := GPU{Index: i}
		g.Name, _ = dev.GetName()
		g.UUID, _ = dev.GetUUID()
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
	}
	return out
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
	for _, r := range throttleReasons {
		if reasons&r.bit != 0 {
			t.Throttle = append(t.Throttle, r.name)
		}
	}
	return t
}
