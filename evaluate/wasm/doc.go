// Package wasm is the wasm evaluator: it measures a kernel compiled to
// WebAssembly, run in-process by wazero, through the ABI of
// docs/kernel-authors/wasm-abi.md. The module is compiled once under a guarded runtime,
// whose calls stop at their deadline, for each config's first run, and once
// under a fast one for the timed runs; an instance is reused until it traps
// or is interrupted, and then discarded.
package wasm
