// Command quasimctl is the operator's CLI for quasim.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/quasim/quasim/cmd/quasimctl/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
