// Command quasimctl is the operator's CLI for quasim.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/quasim/quasim/cmd/quasimctl/cli"
	"github.com/quasim/quasim/evaluate/opencl"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == opencl.WorkerMode { // bench live's worker
		os.Exit(opencl.WorkerMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
