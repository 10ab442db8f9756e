package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/daemon/sockapi"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/builtin"
	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/fileown"
	"github.com/quasim/quasim/internal/sdnotify"
	"github.com/quasim/quasim/internal/store"
	"github.com/quasim/quasim/internal/strategies"
	"github.com/quasim/quasim/internal/tuner"
	"github.com/quasim/quasim/introspect"
)

// Run builds everything in dependency order, serves until ctx is done and
// tears down in reverse. Cancellation is the normal way to stop and
// returns nil. A value on reload re-reads the kernel specs.
func Run(ctx context.Context, cfg Config, reload <-chan struct{}, log zerolog.Logger) (err error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	notify := sdnotify.New(cfg.NotifySocket)
	if !notify.Enabled() {
		log.Debug().Msg("NOTIFY_SOCKET not set; not talking to systemd")
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return configError(fmt.Errorf("state dir: %w", fileown.Denied(err, cfg.StateDir, "")))
	}
	// Run as root on a service's state directory, what this run and any
	// earlier one made there is given back to its owner, at start and end.
	if err := fileown.Tree(cfg.StateDir); err != nil {
		return err
	}
	defer func() {
		if terr := fileown.Tree(cfg.StateDir); terr != nil {
			err = errors.Join(err, terr)
		}
	}()
	corrupt := newCorruptRecords(log)
	dbPath := filepath.Join(cfg.StateDir, StateFile)
	_, statErr := os.Lstat(dbPath)
	st, err := store.Open(dbPath, store.Options{LockTimeout: 2 * time.Second, OnCorrupt: corrupt.skipped})
	if err != nil {
		return configError(fileown.Denied(err, dbPath, cfg.StateDir))
	}
	corrupt.opened(st.CheckReport(), log)
	defer func() { err = errors.Join(err, st.Close()) }()
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := fileown.Owner(dbPath, cfg.StateDir); err != nil {
			return err
		}
	}

	keyPath := filepath.Join(cfg.StateDir, "issuer.key")
	key, created, err := certs.LoadOrCreateKey(keyPath)
	if err != nil {
		return configError(fmt.Errorf("issuer key: %w", fileown.Denied(err, keyPath, cfg.StateDir)))
	}
	if created {
		if err := fileown.Owner(keyPath, cfg.StateDir); err != nil {
			return err
		}
		log.Info().Str("key_id", certs.KeyID(key.Public().(ed25519.PublicKey))).Msg("issuer key created")
	}
	devs := devices{dir: cfg.LockDir}
	gpus, err := introspect.OpenGPUs()
	if err != nil {
		log.Info().Str("nvidia", err.Error()).Msg("no GPU telemetry")
		gpus = nil
	} else {
		defer func() {
			if err := gpus.Close(); err != nil {
				log.Error().Err(err).Msg("GPU settings left changed at shutdown")
			}
		}()
		log.Info().Int("gpus", len(gpus.Info().GPUs)).Str("driver", gpus.Info().Driver).Msg("NVML opened")
		restored, err := gpus.Recover(filepath.Join(cfg.StateDir, "gpu-settings.json"))
		if len(restored) > 0 {
			log.Warn().Strs("restored", restored).Msg("GPU settings an earlier run left changed were set back")
		}
		if err != nil {
			log.Error().Err(err).Msg("GPU settings an earlier run changed could not all be set back")
		}
	}
	classes := []string{builtin.CPUClass()}
	if gpus != nil {
		n := gpus.Info()
		for _, g := range n.GPUs {
			classes = append(classes, n.Class(g))
		}
	}
	if err := devs.prepare(classes); err != nil {
		return configError(err)
	}
	rapl, raplErr := introspect.NewRAPL(os.DirFS("/"))
	if raplErr != nil {
		log.Info().Str("cpu_energy", raplErr.Error()).Msg("no CPU energy readings")
		rapl = nil
	}
	gate := &idleGate{cpuMax: cfg.IdleCPU, gpuMax: cfg.IdleGPU, fsys: os.DirFS("/"), log: log.With().Str("component", "idle").Logger()}
	if gpus != nil {
		gate.gpus = func(class string) (float64, []uint32, bool) {
			var ours map[int]bool // read from /proc only when the GPU runs processes
			return gpus.Use(class, func(pid uint32) bool {
				if ours == nil {
					ours = introspect.Tree(os.DirFS("/"), os.Getpid())
				}
				return ours[int(pid)]
			})
		}
	}
	go gate.run(ctx, time.Second)
	meter := func(device string) introspect.Meter {
		switch {
		case gpus != nil && strings.HasPrefix(device, "nvidia/"):
			if m := gpus.Meter(device); m != nil {
				return m
			}
		case rapl != nil && strings.HasPrefix(device, "cpu/"):
			return rapl
		}
		return nil
	}
	ocl := newOpenCLDevices(cfg.OpenCLWorker, cfg.StateDir, log.With().Str("component", "opencl").Logger())
	lock := func(ctx context.Context, device string) (func(), error) {
		if !strings.HasPrefix(device, "opencl/") || !ocl.cpuClasses(ctx)[device] {
			return devs.lock(ctx, device)
		}
		// An OpenCL device that is the CPU: the CPU's lock first, always.
		cpu, err := devs.lock(ctx, builtin.CPUClass())
		if err != nil {
			return nil, err
		}
		dev, err := devs.lock(ctx, device)
		if err != nil {
			cpu()
			return nil, err
		}
		return func() { dev(); cpu() }, nil
	}
	sched := &scheduler{}
	var fn *fleetNode // set before the scheduler starts; nil without a fleet
	knobs := func(device string, cfg map[string]any) (func() error, error) {
		var set []string
		for _, k := range introspect.Knobs {
			if _, ok := cfg[k]; ok {
				set = append(set, k)
			}
		}
		if len(set) == 0 {
			return func() error { return nil }, nil
		}
		if gpus == nil || !strings.HasPrefix(device, "nvidia/") {
			return nil, fmt.Errorf("%s: device settings need an NVIDIA GPU through NVML, and device %s is none", strings.Join(set, ", "), device)
		}
		return gpus.Apply(device, cfg)
	}
	m := newMetrics(sched)
	devCol := newDeviceCollector(gpus, rapl, gate)
	go devCol.run(ctx, 30*time.Second)
	m.reg.MustRegister(devCol, corrupt.counter)
	*sched = scheduler{
		metrics:  m,
		dir:      cfg.KernelsDir,
		st:       st,
		cron:     newCron(),
		log:      log.With().Str("component", "scheduler").Logger(),
		seed:     cfg.Seed,
		retryMin: cfg.RetryMin,
		clock:    cfg.Now,
		opencl:   ocl,
		tn: tuner.New(tuner.Config{
			Store:       st,
			NewStrategy: defaultStrategy,
			Lock:        lock,
			CPU:         builtin.CPUClass(),
			Signer:      key,
			Details:     deviceDetails(),
			Measured: func(job tuner.Job, tr evaluate.Trial, took time.Duration) {
				m.measured(job, tr, took)
				if fn != nil {
					fn.measured(job, tr)
				}
			},
			Priors: cfg.packs.sources,
			Related: func(job tuner.Job) map[string][]store.Trial {
				if fn == nil {
					return nil
				}
				return fn.related(job)
			},
			Busy:          gate.busy,
			Meter:         meter,
			Knobs:         knobs,
			IdleWait:      cfg.IdleWait,
			IdlePoll:      cfg.IdlePoll,
			Finalists:     cfg.Finalists,
			ConfirmRounds: cfg.ConfirmRounds,
			Log:           log.With().Str("component", "tuner").Logger(),
			Now:           cfg.Now,
		}),
	}
	ceil, err := loadCeilings(cfg.StateDir)
	if err != nil {
		log.Warn().Err(err).Msg("ceilings file")
	}
	if !cfg.NoCeilings {
		cpu, _ := introspect.ReadCPU(os.DirFS("/"))
		go ceil.measureCPU(ctx, builtin.CPUClass(), cpu.Threads, devs.lock, gate.busy, cfg.Now, log.With().Str("component", "ceilings").Logger())
	}
	srv := &server{
		sched: sched, st: st,
		log: log.With().Str("component", "api").Logger(), version: cfg.Version, started: cfg.Now(),
		stateDir: cfg.StateDir, specDir: cfg.KernelsDir, metrics: m, gpus: gpus, lockDir: cfg.LockDir,
		lockDevice: lock,
		ceilings:   ceil,
		opencl:     ocl,
		evidence:   cfg.Evidence,
	}
	srv.zoner = &zoner{sched: sched, key: key, lock: devs.lock, log: log.With().Str("component", "zoning").Logger(), now: cfg.Now, ctx: ctx}
	sched.zoneChanged = func(jobs ...store.JobKey) { srv.zoner.jobsChanged(ctx, jobs...) }
	var reloadMu sync.Mutex // load and apply as one step, or an older load could win
	doReload := func() api.ReloadResponse {
		reloadMu.Lock()
		defer reloadMu.Unlock()
		ks, ps, errs := sched.load()
		sched.apply(ks, ps, errs)
		srv.zoner.update(ctx, sched.pipelines())
		if fn != nil {
			fn.reloadTrust()
		}
		log.Info().Int("kernels", len(ks)).Int("pipelines", len(ps)).Int("errors", len(errs)).Msg("specs loaded")
		if errs == nil {
			errs = []string{}
		}
		return api.ReloadResponse{Kernels: len(ks), Pipelines: len(ps), Errors: errs}
	}
	srv.reload = doReload
	sched.splitBudget = srv.splitBudget
	srv.setKey(key)
	if fn, err = newFleetNode(cfg.Fleet, key, sched, st, log.With().Str("component", "fleet").Logger()); err != nil {
		return err
	}
	srv.fleet = fn
	if srv.fleet != nil {
		sched.onChange, sched.deferStart = srv.fleet.localChanged, srv.fleet.deferStart
		m.reg.MustRegister(&fleetCollector{srv: srv})
	}

	sc := srv.apiConfig()
	sc.Writers = sockapi.NewWriters(cfg.Operators, cfg.OperatorGroup)
	sc.Observers = sockapi.NewLimiter(cfg.ObserveRate, cfg.ObserveBurst, cfg.Now)
	sc.BaseContext = ctx
	srv.api = sockapi.New(sc)
	ln, err := sockapi.Listen(cfg.Socket)
	if err != nil {
		return err
	}
	sched.start(ctx, func() { doReload() })

	// Metrics may also be served on TCP, for a Prometheus server to scrape:
	// that listener serves GET /metrics and, with --ui, the read-only
	// pages under /ui/, nothing else.
	var ms *http.Server
	var mln net.Listener
	if cfg.MetricsListen != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			ln.Close()
			return fmt.Errorf("--metrics-listen %s: %w", cfg.MetricsListen, err)
		}
		ms = &http.Server{Handler: sockapi.TCPHandler(m.handler(), cfg.UI, cfg.Socket, cfg.Version), ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
		log.Info().Str("addr", mln.Addr().String()).Msg("metrics listening")
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.api.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve %s: %w", cfg.Socket, err)
		}
		return nil
	})
	if ms != nil {
		g.Go(func() error {
			if err := ms.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve metrics %s: %w", cfg.MetricsListen, err)
			}
			return nil
		})
	}
	if srv.fleet != nil {
		g.Go(func() error { return srv.fleet.run(gctx, srv) })
	}
	g.Go(func() error {
		for {
			select {
			case <-gctx.Done():
				return nil
			case <-reload:
				doReload()
			}
		}
	})
	if cfg.Watchdog > 0 {
		g.Go(func() error {
			t := time.NewTicker(cfg.Watchdog)
			defer t.Stop()
			for {
				select {
				case <-gctx.Done():
					return nil
				case <-t.C:
					if err := notify.Watchdog(); err != nil {
						log.Warn().Err(err).Msg("watchdog ping")
					}
				}
			}
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		if err := notify.Stopping(); err != nil {
			log.Warn().Err(err).Msg("sd_notify")
		}
		log.Info().Msg("quasimd stopping")
		// One deadline for requests and cycles together.
		deadline := time.Now().Add(cfg.ShutdownTimeout)
		sctx, cancel := context.WithDeadline(context.WithoutCancel(gctx), deadline)
		defer cancel()
		herr := srv.api.Shutdown(sctx)
		if ms != nil {
			herr = errors.Join(herr, ms.Shutdown(sctx))
		}
		serr := sched.stop(deadline)
		ln.Close() // removes the socket file if it is still ours
		return errors.Join(herr, serr)
	})
	if err := notify.Ready(); err != nil {
		log.Warn().Err(err).Msg("sd_notify")
	}
	if cfg.packs.len() > 0 {
		log.Info().Str("priors", cfg.packs.String()).Msg("prior packs loaded: new jobs of their kernels warm-start from them")
	}
	log.Info().Str("socket", cfg.Socket).Str("state_dir", cfg.StateDir).Str("kernels_dir", cfg.KernelsDir).Str("version", cfg.Version).Msg("quasimd ready")
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// defaultStrategy is the portfolio quasimd tunes with.
func defaultStrategy(s *genome.Space, seed uint64) evolve.Strategy {
	f, _ := strategies.Get(strategies.Default)
	return f(s, seed)
}

// newCron parses 5-field schedules and descriptors such as @every 6h.
func newCron() *cron.Cron {
	return cron.New(cron.WithParser(cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)))
}
