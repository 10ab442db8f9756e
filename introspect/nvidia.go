package introspect

import (
	"fmt"
	"strings"
)

// GPU is one NVIDIA GPU as NVML describes it.
type GPU struct {
	Index             int     `json:"index"`
	Name              string  `json:"name"`
	UUID              string  `json:"uuid"`
	Architecture      string  `json:"architecture,omitempty"` // e.g. "ampere"
	ComputeCapability string  `json:"compute_capability"`     // e.g. "8.0"
	MemoryMiB         uint64  `json:"memory_mib"`
	PowerLimitW       float64 `json:"power_limit_w,omitempty"`
	MinPowerLimitW    float64 `json:"min_power_limit_w,omitempty"`
	MaxPowerLimitW    float64 `json:"max_power_limit_w,omitempty"`
}

// NVIDIA is what NVML says of the machine's GPUs, or why it said nothing.
type NVIDIA struct {
	Driver string `json:"driver,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	GPUs   []GPU  `json:"gpus"`
	// Unavailable says why there is no GPU information: no driver, or a
	// build without cgo. Empty when NVML answered.
	Unavailable string `json:"unavailable,omitempty"`
}

// Class is the GPU's device class, nvidia/<name>/sm<cc>/driver-<major>: a
// driver change changes it, so results are re-verified on the new one.
func (n NVIDIA) Class(g GPU) string {
	major, _, _ := strings.Cut(n.Driver, ".")
	return fmt.Sprintf("nvidia/%s/sm%s/driver-%s", g.Name, strings.ReplaceAll(g.ComputeCapability, ".", ""), major)
}

// Telemetry is one sample of a GPU's state, taken around a measurement.
type Telemetry struct {
	PowerMW      uint32 `json:"power_mw"`
	EnergyMJ     uint64 `json:"energy_mj"` // the total-energy counter, millijoules since driver load
	TemperatureC uint32 `json:"temperature_c"`
	SMClockMHz   uint32 `json:"sm_clock_mhz"`
	MemClockMHz  uint32 `json:"mem_clock_mhz"`
	UtilGPU      uint32 `json:"util_gpu_pct"`
	UtilMem      uint32 `json:"util_mem_pct"`
	// Throttle lists the active clock-event (throttle) reasons; thermal
	// and power ones make a measurement suspect.
	Throttle     []string `json:"throttle,omitempty"`
	ThrottleBits uint64   `json:"throttle_bits,omitempty"` // NVML's clock-event reason mask
	// Missing names readings NVML did not give (not supported here).
	Missing []string `json:"missing,omitempty"`
}

// Throttled reports whether a transient limit held the clocks down: a
// thermal slowdown, a hardware slowdown or the power brake, after which a
// measurement is worth taking again. The software power cap is not one: a
// kernel held at the device's power limit runs like that every time (and a
// power-limit knob sets it on purpose), so it is recorded, not re-measured.
func (t Telemetry) Throttled() bool {
	for _, r := range t.Throttle {
		if strings.Contains(r, "thermal") || r == "hw_slowdown" || r == "hw_power_brake_slowdown" {
			return true
		}
	}
	return false
}

// Limits is the reasons that say the device ran below its clocks: the
// throttle reasons less idle, sync boost and application clocks.
func (t Telemetry) Limits() []string {
	var out []string
	for _, r := range t.Throttle {
		switch r {
		case "idle", "sync_boost", "applications_clocks":
		default:
			out = append(out, r)
		}
	}
	return out
}
