package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/internal/version"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	socket string
	json   bool
}

// addGlobalFlags adds --socket and --json to root and its subcommands. A
// subcommand's own --json (bench has one) shadows the global one.
func addGlobalFlags(root *cobra.Command) *globalOptions {
	g := &globalOptions{}
	fs := root.PersistentFlags()
	fs.StringVar(&g.socket, "socket", "", "quasimd's Unix socket (default: $QUASIM_SOCKET; else the user's own daemon's, "+client.UserSocket()+", when one answers there; else the service's, "+client.SystemSocket()+")")
	fs.BoolVar(&g.json, "json", false, "print JSON instead of tables")
	return g
}

// client returns a client of the daemon at --socket that warns on stderr
// when the daemon's version differs from quasimctl's.
func (g *globalOptions) client(cmd *cobra.Command) *client.Client {
	v := version.String()
	stderr := cmd.ErrOrStderr()
	return &client.Client{
		Socket:  g.socket,
		Version: v,
		OnVersionMismatch: func(daemon string) {
			fmt.Fprintf(stderr, "quasimctl: warning: quasimd is version %s, quasimctl is %s\n", daemon, v)
		},
	}
}

// exactArgs is cobra.ExactArgs with a usage error (exit status 2) that names
// the arguments; n == 0 is cobra.NoArgs.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		if n == 0 {
			return usagef("%s takes no arguments, got %q", cmd.Name(), args)
		}
		return usagef("%s takes %s, got %d arguments (usage: %s)", cmd.Name(), names, len(args), cmd.UseLine())
	}
}
