// Command quasimd is the quasim kernel-tuning daemon.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/daemon"
	"github.com/quasim/quasim/internal/version"
)

func main() {
	var cfg daemon.Config
	fs := flag.NewFlagSet("quasimd", flag.ContinueOnError)
	fs.IntVar(&cfg.Budget, "budget", 60, "evaluations per job and cycle")
	fs.DurationVar(&cfg.MaxTime, "max-time", 2*time.Minute, "wall-time cap per job and cycle")
	fs.DurationVar(&cfg.Interval, "interval", 6*time.Hour, "time between tuning cycles")
	fs.BoolVar(&cfg.Once, "once", false, "run one tuning cycle and exit")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "search seed")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "json", "json or console")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println("quasimd", version.String())
		return
	}
	cfg.Kernels = fs.Args()
	lvl, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintf(os.Stderr, "quasimd: --log-level %q: %v\n", *level, err)
		os.Exit(2)
	}
	var log zerolog.Logger
	switch *format {
	case "json":
		log = zerolog.New(os.Stderr)
	case "console":
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly})
	default:
		fmt.Fprintf(os.Stderr, "quasimd: --log-format %q: want json or console\n", *format)
		os.Exit(2)
	}
	log = log.Level(lvl).With().Timestamp().Logger()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "quasimd:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := daemon.Run(ctx, cfg, log); err != nil {
		log.Error().Err(err).Msg("quasimd exited")
		os.Exit(1)
	}
}
