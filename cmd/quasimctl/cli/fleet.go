package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
)

// defaultTrustDir is where quasimd looks for the keys it trusts by
// default (daemon.DefaultFleetTrustDir; the CLI does not link the daemon).
const defaultTrustDir = "/etc/quasim/fleet-trust.d"

func newFleetCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Show the daemon's part in its fleet, and manage the keys it trusts",
	}
	cmd.AddCommand(newFleetStatusCommand(g), newFleetTrustCommand(g))
	return cmd
}

func newFleetStatusCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the fleet: connection, peers, configs received and served, verification failures",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := g.client(cmd).Fleet(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, st)
			}
			kv := func(k string, v any) { fmt.Fprintf(w, "%-24s%v\n", k+":", v) }
			if !st.Enabled {
				kv("fleet", "none (quasimd runs alone; start it with --fleet and --fleet-name to join one)")
				return nil
			}
			kv("fleet", st.Fleet)
			kv("node", dash(st.Node))
			kv("connected", st.Connected)
			kv("view", fleetView(st))
			kv("peers seen", st.Peers)
			kv("configs received", st.Received)
			kv("served from fleet", st.ServedFromFleet)
			kv("verified here", st.Verified)
			kv("verification failures", st.VerifyFailures)
			kv("published", st.Published)
			kv("waiting to publish", st.Waiting)
			var rej []string
			for k, n := range st.Rejected {
				rej = append(rej, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(rej)
			kv("records rejected", dash(strings.Join(rej, ", ")))
			kv("trusted keys", dash(strings.Join(st.Trusted, " ")))
			return nil
		},
	}
}

// fleetView says how old the node's view of the fleet is.
func fleetView(st api.FleetStatus) string {
	var v string
	switch {
	case st.Live:
		v = "live (in step with the fleet)"
	case st.Synced == nil:
		v = "never in step with the fleet"
	default:
		v = fmt.Sprintf("%s old (last in step %s)", (time.Duration(st.ViewAgeS) * time.Second).Round(time.Second), st.Synced.Local().Format(time.RFC3339))
	}
	if st.Restored > 0 {
		v += fmt.Sprintf("; %d records restored from the state file at start", st.Restored)
	}
	return v
}

func newFleetTrustCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Manage the keys whose certificates quasimd serves from the fleet",
	}
	var dir string
	add := &cobra.Command{
		Use:   "add FILE",
		Short: "Trust the public key in FILE (as quasimctl certs pubkey prints it): copy it into the trust directory",
		Args:  exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, path, err := trustAdd(dir, args[0])
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]string{"key_id": id, "file": path})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "trusted %s (%s); quasimctl reload (or SIGHUP) makes quasimd read it\n", id, path)
			return nil
		},
	}
	add.Flags().StringVar(&dir, "trust-dir", defaultTrustDir, "the daemon's trust directory (its --fleet-trust)")
	cmd.AddCommand(add)
	return cmd
}

// trustAdd writes the public key in file to dir as KEYHEX.pub, whole or
// not at all, and returns its key id and the path written.
func trustAdd(dir, file string) (string, string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	if len(data) > 4096 {
		return "", "", fmt.Errorf("%s: %d bytes; a public key is one line such as ed25519:BASE64", file, len(data))
	}
	pub, err := certs.ParsePublicKey(string(data))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", file, err)
	}
	id := certs.KeyID(pub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	path := filepath.Join(dir, strings.TrimPrefix(id, "ed25519:")+".pub")
	if err := writeFileAtomic(path, []byte(certs.FormatPublicKey(pub)+"\n")); err != nil {
		return "", "", fmt.Errorf("trust %s: %w", id, err)
	}
	return id, path, nil
}
