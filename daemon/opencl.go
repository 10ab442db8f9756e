package daemon

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/internal/spec"
)

// openclDevices asks the OpenCL worker once what devices there are: the
// daemon never loads OpenCL itself (a driver fault would take it down),
// and asks only when a spec or quasimctl devices needs to know.
type openclDevices struct {
	worker   []string
	cacheDir string
	env      []string // added to the worker's environment
	log      zerolog.Logger

	once sync.Once
	devs opencl.Devices
}

func newOpenCLDevices(worker []string, stateDir string, log zerolog.Logger) *openclDevices {
	o := &openclDevices{worker: worker, cacheDir: filepath.Join(stateDir, "opencl-cache"), log: log}
	if _, set := os.LookupEnv("POCL_CACHE_DIR"); !set {
		// pocl caches its builds under $HOME, which a service may not
		// have (ProtectHome=yes): keep them beside quasim's own.
		o.env = append(o.env, "POCL_CACHE_DIR="+filepath.Join(o.cacheDir, "pocl"))
	}
	return o
}

// get returns the devices, discovering them on the first call and saying
// once in the log when there are none.
func (o *openclDevices) get(ctx context.Context) opencl.Devices {
	o.once.Do(func() {
		if len(o.worker) == 0 {
			o.devs.Unavailable = "no OpenCL worker command configured"
		} else if d, err := opencl.Discover(ctx, o.worker, o.env); err != nil {
			o.devs.Unavailable = err.Error()
		} else {
			o.devs = d
		}
		if o.devs.Unavailable != "" {
			o.log.Info().Str("opencl", o.devs.Unavailable).Msg("no OpenCL devices; opencl kernels are skipped")
			return
		}
		for _, d := range o.devs.Devices {
			o.log.Info().Str("device", d.Class).Str("platform", d.Platform).Msg("OpenCL device")
		}
	})
	return o.devs
}

// run is how specs run OpenCL kernels here.
func (o *openclDevices) run(ctx context.Context) *spec.OpenCLRun {
	d := o.get(ctx)
	return &spec.OpenCLRun{Worker: o.worker, CacheDir: o.cacheDir, Env: o.env, Unavailable: d.Unavailable}
}

// cpuClasses are the OpenCL devices that are the CPU (pocl, Intel's CPU
// runtime): their measurements take the CPU's lock too, so builtin CPU
// kernels and OpenCL kernels never time each other's load.
func (o *openclDevices) cpuClasses(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	for _, d := range o.get(ctx).Devices {
		if d.Type == "cpu" {
			out[d.Class] = true
		}
	}
	return out
}

// api is the devices as the API reports them.
func (o *openclDevices) api(ctx context.Context, lock func(string) string) api.OpenCL {
	d := o.get(ctx)
	out := api.OpenCL{Devices: []api.OpenCLDevice{}, Unavailable: d.Unavailable}
	for _, x := range d.Devices {
		out.Devices = append(out.Devices, api.OpenCLDevice{
			Class: x.Class, Platform: x.Platform, PlatformVersion: x.PlatformVersion, Name: x.Name, Vendor: x.Vendor,
			Type: x.Type, Version: x.Version, Driver: x.Driver, ComputeUnits: x.ComputeUnits, MaxWorkGroup: x.MaxWorkGroup,
			LocalMemBytes: x.LocalMemBytes, GlobalMemBytes: x.GlobalMemBytes, Lock: lock(x.Class),
		})
	}
	return out
}
