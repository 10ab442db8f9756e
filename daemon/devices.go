package daemon

import (
	"net/http"
	"os"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/introspect"
)

// getDevices reports the CPU and NVIDIA GPUs as introspect finds them now,
// and the OpenCL devices as the worker found them.
func (s *server) getDevices(r *http.Request) (any, error) {
	var out api.Devices
	c, err := introspect.ReadCPU(os.DirFS("/"))
	out.CPU = api.CPU{
		Class: c.Class(), Model: c.Model, Vendor: c.Vendor, Arch: c.Arch, Threads: c.Threads, Cores: c.Cores,
		Sockets: c.Sockets, Features: c.Features, MHz: c.MHz, MaxMHz: c.MaxMHz, Energy: c.Energy,
	}
	if err != nil {
		out.CPU.Error = err.Error()
	}
	lock := func(class string) string {
		if s.lockDir == "" {
			return ""
		}
		return LockFile(s.lockDir, class)
	}
	out.CPU.Lock = lock(out.CPU.Class)
	out.CPU.Ceilings = s.ceilings.get(out.CPU.Class)
	// The open session's view: a second NVML instance beside it would
	// reload the library under the session's feet.
	var n introspect.NVIDIA
	if s.gpus != nil {
		n = s.gpus.Info()
	} else {
		n = introspect.DiscoverNVIDIA()
	}
	out.NVIDIA = api.NVIDIA{Driver: n.Driver, CUDA: n.CUDA, GPUs: []api.GPU{}, Unavailable: n.Unavailable}
	for i, g := range n.GPUs {
		gpu := api.GPU{
			Index: g.Index, Class: n.Class(g), Name: g.Name, UUID: g.UUID,
			Architecture: g.Architecture, ComputeCapability: g.ComputeCapability, MemoryMiB: g.MemoryMiB,
			PowerLimitW: g.PowerLimitW, MinPowerLimitW: g.MinPowerLimitW, MaxPowerLimitW: g.MaxPowerLimitW,
			Lock: lock(n.Class(g)),
		}
		if s.gpus != nil { // the limit now, not as the session opened
			if w, ok := s.gpus.PowerLimitW(i); ok {
				gpu.PowerLimitW = w
			}
		}
		out.NVIDIA.GPUs = append(out.NVIDIA.GPUs, gpu)
	}
	out.OpenCL = api.OpenCL{Devices: []api.OpenCLDevice{}, Unavailable: "this daemon runs no OpenCL worker"}
	if s.opencl != nil {
		out.OpenCL = s.opencl.api(r.Context(), lock)
	}
	return out, nil
}
