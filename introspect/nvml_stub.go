//go:build !cgo

package introspect

import "errors"

const noCgo = "NVIDIA GPUs unavailable: quasimd was built without cgo, which NVML needs"

// DiscoverNVIDIA, in a build without cgo, cannot load NVML and says so.
func DiscoverNVIDIA() NVIDIA {
	return NVIDIA{GPUs: []GPU{}, Unavailable: noCgo}
}

// GPUs, in a build without cgo, is never opened.
type GPUs struct{}

// OpenGPUs, in a build without cgo, says why there are no GPUs.
func OpenGPUs() (*GPUs, error) { return nil, errors.New(noCgo) }

// Info of a GPUs that cannot be opened.
func (g *GPUs) Info() NVIDIA { return DiscoverNVIDIA() }

// Close does nothing.
func (g *GPUs) Close() error { return nil }

// Sample has nothing to read.
func (g *GPUs) Sample(int) Telemetry { return Telemetry{} }

// Meter has no GPU to meter.
func (g *GPUs) Meter(string) Meter { return nil }

// Knobs are the device settings a config can tune (see the cgo build).
var Knobs = []string{"nvml_pwr_limit", "nvml_gr_clock", "nvml_mem_clock"}

// Apply cannot set anything without NVML.
func (g *GPUs) Apply(class string, _ map[string]any) (func() error, error) {
	return nil, errors.New(noCgo)
}

// Use has no GPU to ask.
func (g *GPUs) Use(string, func(uint32) bool) (float64, []uint32, bool) { return 0, nil, false }

// Recover has nothing to undo without NVML.
func (g *GPUs) Recover(string) ([]string, error) { return nil, nil }

// PowerLimitW has no GPU to read.
func (g *GPUs) PowerLimitW(int) (float64, bool) { return 0, false }
