package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quasim/quasim/internal/fileown"
)

// Config is quasimd's configuration, parsed from flags by cmd/quasimd.
type Config struct {
	Socket     string // Unix socket path of the API
	StateDir   string // holds quasim.db
	KernelsDir string // kernel specs; missing or empty means the builtin kernels
	// KernelsDirGiven says KernelsDir was asked for (--kernels or
	// $QUASIMD_KERNELS), so a missing one is a mistake, not the builtins.
	KernelsDirGiven bool
	// Priors is a prior pack, or a directory of *.qprior packs, that new
	// jobs warm-start from; a missing one is none unless PriorsGiven.
	Priors          string
	PriorsGiven     bool
	packs           *priorPacks   // loaded by Validate
	Operators       []uint32      // uids allowed to write besides root, the daemon's uid and group quasim
	OperatorGroup   string        // group whose members may write (default "quasim")
	ShutdownTimeout time.Duration // how long in-flight requests and cycles get on shutdown
	NotifySocket    string        // $NOTIFY_SOCKET
	Watchdog        time.Duration // interval for WATCHDOG=1; zero disables
	Seed            uint64        // search seed
	MetricsListen   string        // optional TCP address serving GET /metrics too
	UI              bool          // also serve the read-only HTML pages at /ui/ on MetricsListen
	// IdleCPU is the share of all CPUs (0..1) other processes may use
	// before cycles wait for them; 0 turns the gate off. IdleGPU is the
	// same for a GPU's utilisation, in percent. IdleWait is how long a
	// cycle waits in all before it is skipped (or, part done, interrupted).
	IdleCPU  float64
	IdleGPU  float64
	IdleWait time.Duration
	IdlePoll time.Duration // how often a waiting cycle looks again (default 5s)
	// RetryMin is the first wait before a failed cycle is tried again; it
	// doubles with each failure in a row, up to the job's schedule
	// interval (default DefaultRetryMin).
	RetryMin time.Duration
	LockDir  string // holds the devices' flock files; empty: in-process locks only
	// ObserveRate and ObserveBurst are the token bucket of each uid's
	// observation reports (zero: DefaultObserveRate, DefaultObserveBurst;
	// a negative rate: no limit).
	ObserveRate  float64
	ObserveBurst int
	// NoCeilings turns off measuring the CPU's roofline ceilings (about a
	// second of every thread, once per device class and state directory).
	NoCeilings bool
	Fleet      FleetConfig // no URLs: no fleet, no network use
	// Evidence is what revokes a certificate on runtimes' error reports
	// and fleet nodes' failure reports (zero fields: the defaults).
	Evidence Evidence
	// Finalists is how many of a job's best configs a certification
	// measures again, each in ConfirmRounds fresh worker processes, before
	// it verifies them in order of their medians (tuner.Config; zero: the
	// defaults, negative: the search's best alone).
	Finalists     int
	ConfirmRounds int
	// OpenCLWorker starts an OpenCL worker process (quasimd
	// opencl-worker); empty: opencl kernels are refused.
	OpenCLWorker []string
	Version      string
	Now          func() time.Time
}

// Under systemd, the unit's RuntimeDirectory=, StateDirectory= and
// ConfigurationDirectory= reach the daemon as $RUNTIME_DIRECTORY,
// $STATE_DIRECTORY and $CONFIGURATION_DIRECTORY (absolute paths joined by
// ':'), and the daemon's defaults follow them: the unit then runs as user
// quasim with neither $XDG_RUNTIME_DIR nor a /tmp shared with anyone
// (PrivateTmp=yes), where the user defaults would be wrong.

// systemdDirs returns the absolute paths systemd listed in env, if any.
func systemdDirs(env string) []string {
	var out []string
	for _, d := range strings.Split(os.Getenv(env), ":") {
		if filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// DefaultSocket is quasimd.sock in the first $RUNTIME_DIRECTORY under
// systemd, /run/quasim/quasimd.sock for root, else under $XDG_RUNTIME_DIR
// (or the temp dir) for the user.
func DefaultSocket() string {
	if d := systemdDirs("RUNTIME_DIRECTORY"); len(d) > 0 {
		return filepath.Join(d[0], "quasimd.sock")
	}
	if os.Getuid() == 0 {
		return "/run/quasim/quasimd.sock"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "quasim", "quasimd.sock")
	}
	return filepath.Join(os.TempDir(), "quasim-"+strconv.Itoa(os.Getuid()), "quasimd.sock")
}

// systemStateDir is the service's state directory as root runs it.
const systemStateDir = "/var/lib/quasim"

// DefaultStateDir is the first $STATE_DIRECTORY under systemd,
// /var/lib/quasim for root, else $XDG_STATE_HOME/quasim
// (~/.local/state/quasim).
func DefaultStateDir() string {
	if d := systemdDirs("STATE_DIRECTORY"); len(d) > 0 {
		return d[0]
	}
	if os.Getuid() == 0 {
		return systemStateDir
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "quasim")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "quasim")
	}
	return filepath.Join(os.TempDir(), "quasim-state-"+strconv.Itoa(os.Getuid()))
}

// DefaultLockDir is, under systemd, the second $RUNTIME_DIRECTORY
// (the unit's RuntimeDirectory=quasim lock/quasim gives /run/lock/quasim,
// where other users' flock(1) finds the same files) or else locks/ in the
// first; /run/lock/quasim for root; else under $XDG_RUNTIME_DIR (or the
// temp dir) for the user.
func DefaultLockDir() string {
	if d := systemdDirs("RUNTIME_DIRECTORY"); len(d) > 1 {
		return d[1]
	} else if len(d) == 1 {
		return filepath.Join(d[0], "locks")
	}
	if os.Getuid() == 0 {
		return "/run/lock/quasim"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "quasim", "locks")
	}
	return filepath.Join(os.TempDir(), "quasim-"+strconv.Itoa(os.Getuid()), "locks")
}

// DefaultKernelsDir is where operators put kernel specs.
const DefaultKernelsDir = "/etc/quasim/kernels.d"

// DefaultKernels is kernels.d in the first $CONFIGURATION_DIRECTORY under
// systemd, else DefaultKernelsDir.
func DefaultKernels() string {
	if d := systemdDirs("CONFIGURATION_DIRECTORY"); len(d) > 0 {
		return filepath.Join(d[0], "kernels.d")
	}
	return DefaultKernelsDir
}

// ErrConfig is the error Run returns for a fault of the setup that a
// restart cannot cure, such as a state or lock file the daemon's user may
// not open: quasimd exits 78 on it, which systemd does not restart.
var ErrConfig = errors.New("configuration error")

// configError marks a permission error (fileown.DeniedError) as ErrConfig.
func configError(err error) error {
	if _, ok := errors.AsType[*fileown.DeniedError](err); ok {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return err
}

// Validate checks cfg once, before anything starts.
func (c *Config) Validate() error {
	var errs []error
	if c.Socket == "" {
		errs = append(errs, errors.New("socket: empty path"))
	} else if !filepath.IsAbs(c.Socket) {
		errs = append(errs, fmt.Errorf("socket %q: must be an absolute path", c.Socket))
	}
	if c.StateDir == "" {
		errs = append(errs, errors.New("state-dir: empty path"))
	}
	if err := c.checkKernelsDir(); err != nil {
		errs = append(errs, err)
	}
	if c.packs == nil {
		var err error
		if c.packs, err = loadPriors(c.Priors, c.PriorsGiven); err != nil {
			errs = append(errs, err)
		}
	}
	if c.IdleCPU < 0 || c.IdleCPU > 1 {
		errs = append(errs, fmt.Errorf("idle-cpu %v: want a share of all CPUs from 0 (off) to 1", c.IdleCPU))
	}
	if c.IdleGPU < 0 || c.IdleGPU > 100 {
		errs = append(errs, fmt.Errorf("idle-gpu %v: want a utilisation percent from 0 (off) to 100", c.IdleGPU))
	}
	if c.IdleWait < 0 {
		errs = append(errs, fmt.Errorf("idle-wait %s: must not be negative", c.IdleWait))
	}
	if c.RetryMin < 0 {
		errs = append(errs, fmt.Errorf("retry-min %s: must not be negative", c.RetryMin))
	}
	if c.ConfirmRounds < 0 {
		errs = append(errs, fmt.Errorf("confirm-rounds %d: must not be negative", c.ConfirmRounds))
	}
	if c.UI && c.MetricsListen == "" {
		errs = append(errs, errors.New("ui: needs --metrics-listen, the TCP address that serves it"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("shutdown-timeout %s: must be positive", c.ShutdownTimeout))
	}
	if err := c.Fleet.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Evidence.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkKernelsDir refuses a kernels path that is a file, and one that was
// asked for and is not there: either would run the wrong kernels (none, or
// the builtins) without a word.
func (c *Config) checkKernelsDir() error {
	if c.KernelsDir == "" {
		return nil
	}
	fi, err := os.Stat(c.KernelsDir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("kernels %q: a file, not a directory of kernel specs", c.KernelsDir)
	case errors.Is(err, fs.ErrNotExist) && c.KernelsDirGiven:
		return fmt.Errorf("kernels %q: no such directory (without --kernels a missing default directory tunes the builtin kernels)", c.KernelsDir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("kernels %q: %w", c.KernelsDir, err)
	}
	return nil
}

func (c *Config) defaults() {
	if c.OperatorGroup == "" {
		c.OperatorGroup = "quasim"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.ObserveRate == 0 {
		c.ObserveRate = DefaultObserveRate
	}
	if c.ObserveBurst <= 0 {
		c.ObserveBurst = DefaultObserveBurst
	}
}
