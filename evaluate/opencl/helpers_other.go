//go:build !linux

package opencl

import "syscall"

// Compile helpers rely on Linux's parent-death signal and /proc.
const helpersWork = false

func helperAttr() *syscall.SysProcAttr { return nil }

func waitStopped(int) {}
