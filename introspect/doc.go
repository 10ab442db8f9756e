// Package introspect discovers the devices quasimd measures on and names
// their device classes (ARCHITECTURE.md): the CPU from /proc and /sys, and
// NVIDIA GPUs through NVML where quasimd was built with cgo and a driver is
// present. It says plainly what it could not find or read, and never
// invents a figure: no readable energy counter means "energy unavailable".
package introspect
