//go:build !linux

package opencl

import (
	"os"
	"syscall"
)

// Compile helpers rely on Linux's parent-death signal and /proc.
const helpersWork = false

func helperAttr() *syscall.SysProcAttr { return nil }

func selfExe() (string, error) { return os.Executable() }

func waitStopped(int) {}
