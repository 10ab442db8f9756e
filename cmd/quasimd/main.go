// Command quasimd is the quasim kernel-tuning daemon. It tunes kernels on
// cron-triggered cycles, keeps trials, policies and served configs in a
// bbolt store, and serves the best config over a Unix socket.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/quasim/quasim/daemon"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/opencl"
	"github.com/quasim/quasim/internal/sdnotify"
	"github.com/quasim/quasim/internal/version"
)

// main runs the daemon, or with "db check|salvage" the offline tools of
// its state file (daemon.DB). Exit codes: 0 ok, 1 runtime error, and two
// that a restart cannot cure, listed in quasimd.service's
// RestartPreventExitStatus=: exitConfig and exitDamaged.
func main() { os.Exit(run()) }

// The exit codes a restart cannot cure. They are not 2: the Go runtime
// exits 2 after a panic and on SIGABRT, the signal of systemd's watchdog,
// and after those a restart is what is wanted.
const (
	exitConfig  = 78 // EX_CONFIG of sysexits.h: bad flags, environment or configuration, a state or lock file quasimd may not open
	exitDamaged = 65 // EX_DATAERR: the state file is damaged (quasimd db salvage)
)

func run() int {
	if len(os.Args) > 1 && os.Args[1] == "db" {
		return daemon.DB(os.Args[2:], os.Stdout, os.Stderr)
	}
	// The OpenCL worker: quasimd runs itself in this mode, so OpenCL is
	// loaded in a process of its own (evaluate/opencl).
	if len(os.Args) > 1 && os.Args[1] == opencl.WorkerMode {
		return opencl.WorkerMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	}
	var cfg daemon.Config
	fs := flag.NewFlagSet("quasimd", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: quasimd [flags]\n       quasimd db check|salvage ...   check or salvage the state file offline (quasimd db for help)\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Socket, "socket", daemon.DefaultSocket(), "Unix socket of the API ($QUASIMD_SOCKET)")
	fs.StringVar(&cfg.StateDir, "state-dir", daemon.DefaultStateDir(), "directory of the store ($QUASIMD_STATE_DIR)")
	fs.StringVar(&cfg.KernelsDir, "kernels", daemon.DefaultKernels(), "directory of kernel specs; missing or empty tunes the builtin kernels ($QUASIMD_KERNELS)")
	fs.StringVar(&cfg.Priors, "priors", daemon.DefaultPriors(), "prior pack (quasimctl priors build), or a directory of *.qprior packs, that new jobs of their kernels warm-start from; a missing default is none ($QUASIMD_PRIORS)")
	operators := fs.String("operator", "", "comma-separated users or uids allowed to write, besides root, the daemon's user and group quasim ($QUASIMD_OPERATORS)")
	fs.StringVar(&cfg.OperatorGroup, "operator-group", "quasim", "group whose members may write")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "time given to requests and cycles on shutdown")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "search seed")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", "", "also serve GET /metrics (Prometheus) on this TCP address, e.g. 127.0.0.1:9464 ($QUASIMD_METRICS_LISTEN)")
	fs.BoolVar(&cfg.UI, "ui", false, "also serve read-only HTML pages of the tuning (quasimctl report's, reloading as cycles run) at /ui/ on --metrics-listen, for localhost ($QUASIMD_UI)")
	fs.Float64Var(&cfg.IdleCPU, "idle-cpu", 0.5, "cycles wait while other processes use more than this share of all CPUs; 0 turns it off ($QUASIMD_IDLE_CPU)")
	fs.Float64Var(&cfg.IdleGPU, "idle-gpu", 10, "cycles on a GPU wait while other processes on it push its utilisation above this percent; 0 turns it off ($QUASIMD_IDLE_GPU)")
	fs.DurationVar(&cfg.IdleWait, "idle-wait", 10*time.Minute, "how long a cycle waits for an idle device before it is skipped ($QUASIMD_IDLE_WAIT)")
	fs.DurationVar(&cfg.IdlePoll, "idle-poll", 5*time.Second, "how often a waiting cycle looks again")
	fs.DurationVar(&cfg.RetryMin, "retry-min", daemon.DefaultRetryMin, "a failed cycle is tried again after this, doubling with each failure in a row up to its job's schedule interval")
	fs.StringVar(&cfg.LockDir, "lock-dir", daemon.DefaultLockDir(), "directory of the devices' lock files (flock), shared with other processes that measure; empty for in-process locks only ($QUASIMD_LOCK_DIR)")
	fs.Float64Var(&cfg.ObserveRate, "observe-rate", daemon.DefaultObserveRate, "observation reports each uid may make a second (a token bucket; a request costs 1, plus 1 per 1,000 latencies); negative: no limit")
	fs.IntVar(&cfg.ObserveBurst, "observe-burst", daemon.DefaultObserveBurst, "the bucket's size: reports a uid may make at once")
	fs.BoolVar(&cfg.NoCeilings, "no-ceilings", false, "do not measure the CPU's roofline ceilings (FMA rate, copy bandwidth; about a second, once per device class)")
	fleetURLs := fs.String("fleet", "", "comma-separated NATS servers of a fleet to share certified configs with, e.g. nats://10.0.0.1:4222,nats://10.0.0.2:4222; empty: no fleet, no network use ($QUASIMD_FLEET)")
	fs.StringVar(&cfg.Fleet.Name, "fleet-name", "", "the fleet's name, which scopes its KV bucket and stream ($QUASIMD_FLEET_NAME)")
	fs.StringVar(&cfg.Fleet.TrustDir, "fleet-trust", daemon.DefaultFleetTrustDir, "directory of *.pub keys whose certificates are served; the daemon's own key is always trusted ($QUASIMD_FLEET_TRUST)")
	fs.IntVar(&cfg.Fleet.Replicas, "fleet-replicas", 1, "replicas of the fleet's bucket and stream when this node creates them (3 on a 3-server cluster)")
	fs.DurationVar(&cfg.Fleet.Wait, "fleet-wait", 0, "how long a job with nothing served waits for a fleet config before tuning here; 0: tune at once unless the fleet already has one")
	fs.StringVar(&cfg.Fleet.CredsFile, "fleet-creds", "", "NATS credentials file ($QUASIMD_FLEET_CREDS)")
	fs.StringVar(&cfg.Fleet.NkeyFile, "fleet-nkey", "", "NATS nkey seed file ($QUASIMD_FLEET_NKEY)")
	fs.StringVar(&cfg.Fleet.TLSCA, "fleet-tls-ca", "", "CA file of the NATS servers' certificates")
	fs.StringVar(&cfg.Fleet.TLSCert, "fleet-tls-cert", "", "client certificate for mutual TLS with the NATS servers")
	fs.StringVar(&cfg.Fleet.TLSKey, "fleet-tls-key", "", "key of --fleet-tls-cert")
	fs.IntVar(&cfg.Evidence.UIDQuorum, "error-quorum", daemon.DefaultUIDQuorum, "distinct local uids whose error reports within --report-window revoke a certificate without this node's check failing (2 or more)")
	fs.IntVar(&cfg.Evidence.NodeQuorum, "fleet-failure-quorum", daemon.DefaultNodeQuorum, "distinct fleet nodes whose failure reports within --report-window revoke a certificate without this node's check failing (2 or more)")
	fs.DurationVar(&cfg.Evidence.Window, "report-window", daemon.DefaultReportWindow, "how long an error or failure report counts towards a quorum")
	fs.DurationVar(&cfg.Evidence.Recheck, "recheck-every", daemon.DefaultRecheck, "a reported config is re-verified here at most once per this; a report in between waits for the next")
	finalists := fs.Int("finalists", evaluate.DefaultFinalists, "a certification measures this many of a job's best configs again, each in --confirm-rounds fresh worker processes, and verifies them in order of their medians (OpenCL kernels, time objective); 0 or 1: the search's best alone")
	fs.IntVar(&cfg.ConfirmRounds, "confirm-rounds", evaluate.DefaultConfirmRounds, "fresh worker processes each finalist is measured in")
	level := fs.String("log-level", "info", "debug, info, warn or error ($QUASIMD_LOG_LEVEL)")
	format := fs.String("log-format", "json", "json (for journald) or console ($QUASIMD_LOG_FORMAT)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitConfig
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "quasimd: unexpected arguments %q\n", fs.Args())
		return exitConfig
	}
	if *showVersion {
		fmt.Println("quasimd", version.String())
		return 0
	}
	// Environment applies where the flag was not given.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for flagName, env := range map[string]string{
		"socket": "QUASIMD_SOCKET", "state-dir": "QUASIMD_STATE_DIR", "kernels": "QUASIMD_KERNELS", "priors": "QUASIMD_PRIORS",
		"operator": "QUASIMD_OPERATORS", "log-level": "QUASIMD_LOG_LEVEL", "log-format": "QUASIMD_LOG_FORMAT",
		"metrics-listen": "QUASIMD_METRICS_LISTEN", "ui": "QUASIMD_UI", "idle-cpu": "QUASIMD_IDLE_CPU", "idle-gpu": "QUASIMD_IDLE_GPU",
		"idle-wait": "QUASIMD_IDLE_WAIT", "lock-dir": "QUASIMD_LOCK_DIR",
		"fleet": "QUASIMD_FLEET", "fleet-name": "QUASIMD_FLEET_NAME", "fleet-trust": "QUASIMD_FLEET_TRUST",
		"fleet-creds": "QUASIMD_FLEET_CREDS", "fleet-nkey": "QUASIMD_FLEET_NKEY",
	} {
		if v, ok := os.LookupEnv(env); ok && !set[flagName] {
			if err := fs.Set(flagName, v); err != nil {
				fmt.Fprintf(os.Stderr, "quasimd: $%s %q: %v\n", env, v, err)
				return exitConfig
			}
		}
	}
	fs.Visit(func(f *flag.Flag) {
		cfg.KernelsDirGiven = cfg.KernelsDirGiven || f.Name == "kernels"
		cfg.PriorsGiven = cfg.PriorsGiven || f.Name == "priors"
	})
	switch {
	case *finalists < 0:
		fmt.Fprintf(os.Stderr, "quasimd: --finalists %d: must not be negative\n", *finalists)
		return exitConfig
	case cfg.ConfirmRounds < 1:
		fmt.Fprintf(os.Stderr, "quasimd: --confirm-rounds %d: want 1 or more\n", cfg.ConfirmRounds)
		return exitConfig
	case *finalists < 2:
		cfg.Finalists = -1 // the tuner's "never"; its zero is the default
	default:
		cfg.Finalists = *finalists
	}
	lvl, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintf(os.Stderr, "quasimd: --log-level %q: want debug, info, warn or error\n", *level)
		return exitConfig
	}
	var log zerolog.Logger
	switch *format {
	case "json":
		log = zerolog.New(os.Stderr)
	case "console":
		// Colour only on a terminal: not in a file, a pipe or the journal.
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly, NoColor: !isTerminal(os.Stderr)})
	default:
		fmt.Fprintf(os.Stderr, "quasimd: --log-format %q: want json or console\n", *format)
		return exitConfig
	}
	log = log.Level(lvl).With().Timestamp().Logger()
	if cfg.Operators, err = parseOperators(*operators); err != nil {
		fmt.Fprintln(os.Stderr, "quasimd: --operator:", err)
		return exitConfig
	}
	for _, u := range strings.Split(*fleetURLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.Fleet.URLs = append(cfg.Fleet.URLs, u)
		}
	}
	cfg.NotifySocket = os.Getenv("NOTIFY_SOCKET")
	cfg.Watchdog = sdnotify.WatchdogInterval(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"), os.Getpid())
	cfg.Version = version.String()
	if exe, err := os.Executable(); err == nil {
		cfg.OpenCLWorker = []string{exe, opencl.WorkerMode}
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "quasimd: bad configuration:", err)
		return exitConfig
	}

	// Signals are set up before the store is opened.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reload := make(chan struct{}, 1)
	go func() {
		for range hup {
			select {
			case reload <- struct{}{}:
			default:
			}
		}
	}()
	if err := daemon.Run(ctx, cfg, reload, log); err != nil {
		log.Error().Err(err).Msg("quasimd exited")
		if errors.Is(err, daemon.ErrDamaged) {
			// Not a runtime error a restart can cure: say it plainly.
			fmt.Fprintf(os.Stderr, "quasimd: not starting: %v\n", err)
			return exitDamaged
		}
		if errors.Is(err, daemon.ErrConfig) {
			fmt.Fprintf(os.Stderr, "quasimd: not starting: %v\n", err)
			return exitConfig
		}
		return 1
	}
	return 0
}

// parseOperators reads "alice,1001" into uids.
func parseOperators(s string) ([]uint32, error) {
	var out []uint32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if n, err := strconv.ParseUint(f, 10, 32); err == nil {
			out = append(out, uint32(n))
			continue
		}
		u, err := user.Lookup(f)
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", f, err)
		}
		n, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("user %q: uid %q: %w", f, u.Uid, err)
		}
		out = append(out, uint32(n))
	}
	return out, nil
}
