package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/client"
)

// childExit is the exit status of a program quasimctl ran for the user;
// Main exits with it.
type childExit struct {
	name string
	code int
}

func (e childExit) Error() string { return fmt.Sprintf("%s exited with status %d", e.name, e.code) }

// newDBCommand runs `quasimd db ...`: the state file is bbolt, which the
// CLI never opens itself (deps_test.go), so the checks live in quasimd.
func newDBCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "db check|salvage [--state-dir DIR | --db FILE] [--to NEW] [--json]",
		Short: "Check the state file, or copy its readable records into a new one (runs quasimd db)",
		Long: `db runs "quasimd db" on this machine, the quasimd found next to quasimctl or
else on $PATH. It reads the state file directly, not through the daemon:
stop quasimd first (a running daemon holds the file's lock).

  quasimctl db check   [--state-dir DIR | --db FILE] [--json]
      read every page and record; exit 1 when the file is damaged (quasimd
      refuses to start on it) or holds corrupt records.
  quasimctl db salvage [--state-dir DIR | --db FILE] --to NEW [--json]
      copy every readable record into NEW (a new file) and report what was
      lost; then move the damaged file aside and NEW into its place.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if len(args) == 0 {
				cmd.SetOut(cmd.ErrOrStderr())
				cmd.Help()
				return usagef("db needs a subcommand: check or salvage")
			}
			bin, err := findQuasimd()
			if err != nil {
				return err
			}
			args = append(args, daemonStateDir(cmd.Context(), args)...)
			c := exec.CommandContext(cmd.Context(), bin, append([]string{"db"}, args...)...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = c.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() > 0 {
				return childExit{name: "quasimd db " + args[0], code: ee.ExitCode()}
			}
			if err != nil {
				return fmt.Errorf("run %s: %w", bin, err)
			}
			return nil
		},
	}
}

// daemonStateDir is --state-dir of the daemon quasimctl talks to, when one
// answers and args name no file of their own, so db checks the file of
// the service the other commands show (quasimd db then says it is in use).
func daemonStateDir(ctx context.Context, args []string) []string {
	for _, a := range args {
		// -name, --name, with or without =value (Go's flag package)
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "state-dir" || name == "db") {
			return nil
		}
	}
	if _, ok := os.LookupEnv("QUASIMD_STATE_DIR"); ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := (&client.Client{}).Status(ctx)
	if err != nil || st.StateDir == "" {
		return nil
	}
	return []string{"--state-dir", st.StateDir}
}

// findQuasimd returns the quasimd beside this executable, else on $PATH.
func findQuasimd() (string, error) {
	var beside string
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), "quasimd")
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("quasimd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("quasimd not found next to quasimctl (%s) nor on $PATH: db commands run quasimd db; install quasimd or run it by its path", beside)
}
