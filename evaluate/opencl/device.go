package opencl

import (
	"fmt"
	"strings"

	"github.com/quasim/quasim/internal/cl"
)

// Device is an OpenCL device as the worker lists it.
type Device struct {
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platform_version"`
	Name            string `json:"name"`
	Vendor          string `json:"vendor"`
	Type            string `json:"type"`
	Version         string `json:"version"`
	Driver          string `json:"driver"`
	ComputeUnits    int    `json:"compute_units"`
	ClockMHz        int    `json:"clock_mhz,omitempty"`
	MaxWorkGroup    int    `json:"max_work_group"`
	MaxWorkItems    []int  `json:"max_work_items,omitempty"`
	LocalMemBytes   int64  `json:"local_mem_bytes"`
	GlobalMemBytes  int64  `json:"global_mem_bytes"`
	// Class is the device class results are keyed by.
	Class string `json:"class"`
}

// Devices is the worker's --list answer: every device of every platform,
// or why there are none.
type Devices struct {
	Devices     []Device `json:"devices"`
	Unavailable string   `json:"unavailable,omitempty"`
}

// Class is a device's class: opencl/<vendor>/<device>/driver-<version>/<n>cu.
// A driver update or another device is another class, so a config tuned on
// one is never served on another.
func Class(d Device) string {
	clean := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		return strings.ReplaceAll(s, "/", "-")
	}
	return fmt.Sprintf("opencl/%s/%s/driver-%s/%dcu", clean(d.Vendor), clean(d.Name), clean(d.Driver), d.ComputeUnits)
}

func fromCL(d cl.Device) Device {
	out := Device{
		Platform: d.PlatformName, PlatformVersion: d.PlatformVersion,
		Name: d.Name, Vendor: d.Vendor, Type: d.Type, Version: d.Version, Driver: d.DriverVersion,
		ComputeUnits: d.ComputeUnits, ClockMHz: d.ClockMHz, MaxWorkGroup: d.MaxWorkGroup,
		MaxWorkItems: d.MaxWorkItems, LocalMemBytes: d.LocalMemBytes, GlobalMemBytes: d.GlobalMemBytes,
	}
	out.Class = Class(out)
	return out
}

// listDevices loads OpenCL and lists its devices, in platform order.
func listDevices() (*cl.Lib, []cl.Device, error) {
	l, err := cl.Load()
	if err != nil {
		return nil, nil, err
	}
	ps, err := l.Platforms()
	if err != nil {
		return nil, nil, err
	}
	var all []cl.Device
	for _, p := range ps {
		ds, err := l.Devices(p)
		if err != nil {
			return nil, nil, fmt.Errorf("platform %s: %w", p.Name, err)
		}
		all = append(all, ds...)
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("%w: %d platforms, no device", cl.ErrNoOpenCL, len(ps))
	}
	return l, all, nil
}

// pick chooses the device s selects among all.
func pick(all []cl.Device, s Select) (cl.Device, error) {
	var match []cl.Device
	for _, d := range all {
		if strings.Contains(strings.ToLower(d.PlatformName), strings.ToLower(s.Platform)) &&
			strings.Contains(strings.ToLower(d.Name), strings.ToLower(s.Device)) {
			match = append(match, d)
		}
	}
	if s == (Select{}) {
		for _, d := range all {
			if d.Type == "gpu" {
				return d, nil
			}
		}
		return all[0], nil
	}
	if s.Index < 0 || s.Index >= len(match) {
		var names []string
		for _, d := range all {
			names = append(names, d.PlatformName+": "+d.Name)
		}
		return cl.Device{}, fmt.Errorf("device %+v: %d devices match (have %s)", s, len(match), strings.Join(names, "; "))
	}
	return match[s.Index], nil
}
