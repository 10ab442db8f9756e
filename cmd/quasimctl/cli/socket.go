package cli

import (
	"fmt"
	"net"
	"time"

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
	fs.StringVar(&g.socket, "socket", "", SocketUsage(client.UserSocket()))
	fs.BoolVar(&g.json, "json", false, "print JSON instead of tables")
	return g
}

// SocketUsage is the usage of --socket, naming userSocket as the user's
// own daemon's socket: the path for this user in --help, and the rule
// ($XDG_RUNTIME_DIR/...) in the manual page, which is built elsewhere.
func SocketUsage(userSocket string) string {
	return "quasimd's Unix socket (default: $QUASIM_SOCKET; else the user's own daemon's, " + userSocket + ", when one answers there; else the service's, " + client.SystemSocket() + ")"
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

// minArgs is cobra.MinimumNArgs with a usage error (exit status 2).
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		return usagef("%s takes %s, got %d arguments (usage: %s)", cmd.Name(), names, len(args), cmd.UseLine())
	}
}

// newSocketCommand prints the socket the other commands talk to, so a
// script can reach the same daemon with curl as root and as a user.
func newSocketCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "socket",
		Short: "Print the path of the socket quasimctl talks to (for curl --unix-socket)",
		Long: `Print the path of the socket quasimctl talks to: --socket, else $QUASIM_SOCKET,
else the user's own daemon's when one answers there, else the service's.

  curl --unix-socket "$(quasimctl socket)" 'http://quasimd/v1/status'`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := g.socket
			if s == "" {
				s = answering(client.Sockets())
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]string{"socket": s})
			}
			fmt.Fprintln(cmd.OutOrStdout(), s)
			return nil
		},
	}
}

// answering is the first socket a daemon accepts connections on, else the
// last one, which is where the service would listen.
func answering(socks []string) string {
	for _, s := range socks[:len(socks)-1] {
		if c, err := net.DialTimeout("unix", s, time.Second); err == nil {
			c.Close()
			return s
		}
	}
	return socks[len(socks)-1]
}
