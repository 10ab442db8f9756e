//go:build !linux

package main

import "os"

// isTerminal is false where quasimd cannot ask: no colour codes in files.
func isTerminal(*os.File) bool { return false }
