package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

func newDevicesCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "Show the CPU, NVIDIA GPUs and OpenCL devices quasimd can measure on, with their device classes",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := g.client(cmd).Devices(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, d)
			}
			c := d.CPU
			kv := func(k, v string) { fmt.Fprintf(w, "%-14s%s\n", k+":", v) }
			kv("cpu", dash(c.Model))
			kv("class", dash(c.Class))
			threads := strconv.Itoa(c.Threads) + " threads"
			if c.Cores > 0 {
				threads += ", " + strconv.Itoa(c.Cores) + " cores"
			}
			kv("threads", threads)
			kv("features", dash(strings.Join(c.Features, " ")))
			if c.MHz > 0 {
				kv("frequency", fmt.Sprintf("%.0f MHz", c.MHz))
			}
			kv("energy", dash(c.Energy))
			if r := c.Ceilings; r != nil {
				kv("fma peak", fmt.Sprintf("%.1f GFLOP/s float32 on %d threads, %.1f on one (%s)", r.GFLOPS, r.Threads, r.GFLOPSThread, r.FMA))
				kv("copy", fmt.Sprintf("%.1f GB/s (measured %s)", r.BandwidthGBs, r.MeasuredAt.Format("2006-01-02 15:04")))
				for _, l := range r.Levels {
					kv("copy in "+l.Name, fmt.Sprintf("%.1f GB/s (%d KiB level, %d KiB buffers per thread)", l.BandwidthGBs, l.Bytes>>10, l.BufferBytes>>10))
				}
				if r.LevelsNote != "" {
					kv("cache levels", r.LevelsNote)
				}
			} else {
				kv("ceilings", "not measured yet")
			}
			if c.Lock != "" {
				kv("lock", c.Lock)
			}
			if c.Error != "" {
				kv("error", c.Error)
			}
			fmt.Fprintln(w)
			if d.NVIDIA.Unavailable != "" {
				kv("nvidia", d.NVIDIA.Unavailable)
				fmt.Fprintln(w)
				return printOpenCL(w, d.OpenCL, kv)
			}
			kv("nvidia driver", dash(d.NVIDIA.Driver)+" (CUDA "+dash(d.NVIDIA.CUDA)+")")
			t := newTable(w, "GPU", "NAME", "ARCH", "CC", "MEMORY_MIB", "POWER_LIMIT_W", "UUID", "CLASS")
			for _, gpu := range d.NVIDIA.GPUs {
				limit := fmt.Sprintf("%.0f", gpu.PowerLimitW)
				if gpu.MaxPowerLimitW > 0 {
					limit += fmt.Sprintf(" (%.0f-%.0f)", gpu.MinPowerLimitW, gpu.MaxPowerLimitW)
				}
				t.row(strconv.Itoa(gpu.Index), gpu.Name, dash(gpu.Architecture), gpu.ComputeCapability, strconv.FormatUint(gpu.MemoryMiB, 10),
					limit, gpu.UUID, gpu.Class)
			}
			if err := t.flush(); err != nil {
				return err
			}
			for _, gpu := range d.NVIDIA.GPUs {
				if gpu.Lock != "" {
					kv("gpu "+strconv.Itoa(gpu.Index)+" lock", gpu.Lock)
				}
			}
			fmt.Fprintln(w)
			return printOpenCL(w, d.OpenCL, kv)
		},
	}
}

// printOpenCL lists the OpenCL devices, or why there are none.
func printOpenCL(w io.Writer, o api.OpenCL, kv func(k, v string)) error {
	if len(o.Devices) == 0 {
		kv("opencl", dash(o.Unavailable))
		return nil
	}
	t := newTable(w, "PLATFORM", "DEVICE", "TYPE", "CU", "MAX_WG", "LOCAL_KIB", "DRIVER", "CLASS")
	for _, d := range o.Devices {
		t.row(d.Platform, d.Name, d.Type, strconv.Itoa(d.ComputeUnits), strconv.Itoa(d.MaxWorkGroup),
			strconv.FormatInt(d.LocalMemBytes>>10, 10), d.Driver, d.Class)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, d := range o.Devices {
		if d.Lock != "" {
			kv(d.Name+" lock", d.Lock)
		}
	}
	return nil
}
