package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/internal/version"
)

// Exit codes, as listed in --help.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitUnavailable = 3
	exitNotFound    = 4
	exitPermission  = 5
	exitUnhealthy   = 6
	exitInterrupted = 130
)

// ExitStatus is the EXIT STATUS section of --help and of quasimctl(1).
const ExitStatus = exitHelp

const exitHelp = `
EXIT STATUS:
  0    ok
  1    error
  2    usage error (also a request quasimd refuses as invalid, e.g. a bad --problem)
  3    daemon unavailable
  4    not found
  5    permission denied
  6    status: something is failing (cycles, spec files); reload: a spec file did not load
  130  interrupted
`

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// badInput marks err as bad input the user gave (a file named on the
// command line that cannot be read or parsed): exit 2, as a usage error.
func badInput(err error) error { return fmt.Errorf("%w: %w", api.ErrInvalidArgument, err) }

// exitCode is an error with the exit code it ends quasimctl with.
type exitCode struct {
	code int
	err  error
}

func (e exitCode) Error() string { return e.err.Error() }
func (e exitCode) Unwrap() error { return e.err }

// Main runs quasimctl with args and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "quasimctl:", err)
	var (
		ue usageError
		ce childExit
		ec exitCode
	)
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ec):
		return ec.code
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command "),
		errors.Is(err, api.ErrInvalidArgument): // quasimd refused what the arguments asked
		return exitUsage
	case errors.Is(err, api.ErrUnavailable):
		return exitUnavailable
	case errors.Is(err, api.ErrNotFound):
		return exitNotFound
	case errors.Is(err, api.ErrPermissionDenied):
		return exitPermission
	}
	return exitError
}

// Command is quasimctl's command tree, for the generated manual pages and
// completions and for the test that checks the commands the docs quote.
func Command() *cobra.Command { return newRootCommand() }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "quasimctl",
		Short:         "Inspect and drive the quasim kernel-tuning daemon",
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetUsageTemplate(root.UsageTemplate() + exitHelp)
	g := addGlobalFlags(root)
	root.AddCommand(
		newBenchCommand(),
		newStatusCommand(g),
		newKernelsCommand(g),
		newConfigCommand(g),
		newTuneCommand(g),
		newTrialsCommand(g),
		newCyclesCommand(g),
		newImportCommand(g),
		newExportCommand(g),
		newReloadCommand(g),
		newCertsCommand(g),
		newCausalCommand(g),
		newZoningCommand(g),
		newReportCommand(g),
		newDevicesCommand(g),
		newMemgraphCommand(g),
		newFleetCommand(g),
		newDBCommand(),
		newPriorsCommand(g),
		newSocketCommand(g),
		newVersionCommand(g),
	)
	return root
}
