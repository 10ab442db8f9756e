package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/certs"
	"github.com/quasim/quasim/client"
)

// shortIDLen is how much of a certificate id certs list prints; every
// command that takes an ID also accepts a unique prefix.
const shortIDLen = 16

// maxFileBytes bounds what certs verify reads from --file and --pubkey.
const maxFileBytes = 64 << 20

func newCertsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "List, show, verify and revoke signed verification certificates",
		Long: `certs works with the certificates quasimd signs before it serves a config:
each records the checks the config passed (constraints, parity with the
default's output within an error bound) and its latency distribution, and is
signed with the daemon's ed25519 key over canonical bytes.

A certificate saved with "certs show ID --json" and the key printed by
"certs pubkey" verify offline, with no daemon:

  quasimctl certs show ID --json > cert.json
  quasimctl certs pubkey > quasimd.pub
  quasimctl certs verify --file cert.json --pubkey quasimd.pub

Every command that takes an ID also accepts a unique prefix of it, such as
the 16 characters certs list prints.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(
		newCertsListCommand(g),
		newCertsShowCommand(g),
		newCertsVerifyCommand(g),
		newCertsRevokeCommand(g),
		newCertsPubkeyCommand(g),
	)
	return cmd
}

type certsListOptions struct {
	kernel string
}

func newCertsListCommand(g *globalOptions) *cobra.Command {
	var o certsListOptions
	cmd := &cobra.Command{
		Use:   "list [--kernel K]",
		Short: "List the certificates quasimd has issued",
		Long: `list prints one line per certificate: the start of its id, the job it
certifies (kernel, problem size, device), the config key, the certified median
latency, when it was issued, whether its job serves it now, and when and why it
was revoked. --json prints the full ids.`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := g.client(cmd).Certs(cmd.Context(), o.kernel)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cs)
			}
			t := newTable(cmd.OutOrStdout(), "ID", "KERNEL", "PROBLEM", "DEVICE", "KEY", "TIME_MS", "ISSUED", "SERVED", "REVOKED", "REASON")
			for _, c := range cs.Certs {
				served, revoked := "no", "-"
				if c.Served {
					served = "yes"
				}
				if c.Revoked {
					revoked = "yes"
					if c.RevokedAt != nil {
						revoked = fmtTime(*c.RevokedAt)
					}
				}
				t.row(shortID(c.ID), c.Kernel, dash(c.Problem), dash(c.Device), dash(c.Key), fmtMS(c.TimeMS, 4),
					fmtTime(c.IssuedAt), served, revoked, dash(c.Reason))
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&o.kernel, "kernel", "", "only this kernel's certificates")
	return cmd
}

func newCertsShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Print a certificate as a readable report",
		Long: `show prints certificate ID as a report: the job it certifies, each check
with PASS or FAIL and its margin, and the latency distribution; a revoked
certificate ends with a REVOKED line. show does not verify the signature:
use certs verify for that.

With --json it prints the certificate exactly as quasimd stores it, byte for
byte, so the output verifies offline with certs verify --file. A revocation
is then reported on stderr only.`,
		Example: `  quasimctl certs show 3f2a9c0d17b4e5a8
  quasimctl certs show 3f2a9c0d17b4e5a8 --json > cert.json`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := g.client(cmd)
			id, body, revoked, err := fetchCert(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				if revoked != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "quasimctl: certificate %s is revoked: %s\n", id, revoked)
				}
				_, err := w.Write(body)
				return err
			}
			cert, err := certs.Decode(body)
			if err != nil {
				return fmt.Errorf("decode certificate %s: %w", id, err)
			}
			if err := cert.Report(w); err != nil {
				return err
			}
			if revoked != "" {
				fmt.Fprintf(w, "REVOKED: %s\n", revoked)
			}
			return nil
		},
	}
}

type certsVerifyOptions struct {
	file   string
	pubkey string
}

func newCertsVerifyCommand(g *globalOptions) *cobra.Command {
	var o certsVerifyOptions
	cmd := &cobra.Command{
		Use:   "verify ID | verify --file CERT.json --pubkey KEY",
		Short: "Check a certificate's signature and content",
		Long: `verify checks that a certificate was signed by quasimd's key and that its id
matches its content, then prints its report and "signature OK, id OK".

verify ID fetches the certificate and the daemon's public key from quasimd
(--pubkey pins a key instead of the daemon's) and also fails when the
certificate is revoked.

verify --file CERT.json --pubkey KEY needs no daemon: CERT.json is a
certificate saved with certs show --json ("-" reads stdin), KEY is the
"ed25519:..." string certs pubkey prints, or a file holding it. Revocation
cannot be checked offline.

verify exits 1 when the certificate does not verify, is revoked, or records
a failed check, and says which.`,
		Example: `  quasimctl certs verify 3f2a9c0d17b4e5a8
  quasimctl certs verify --file cert.json --pubkey quasimd.pub
  quasimctl certs verify --file cert.json --pubkey ed25519:6Jy5...`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.file != "" {
				if len(args) != 0 {
					return usagef("verify takes ID or --file, not both (usage: %s)", cmd.UseLine())
				}
				if o.pubkey == "" {
					return usagef("verify --file needs --pubkey: the key to check the signature with (certs pubkey prints the daemon's)")
				}
				return nil
			}
			return exactArgs(1, "ID or --file CERT.json --pubkey KEY")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var pub ed25519.PublicKey
			if o.pubkey != "" {
				var err error
				if pub, err = loadPubkey(o.pubkey); err != nil {
					return err
				}
			}
			if o.file != "" {
				return verifyFile(cmd, o.file, pub)
			}
			return verifyOnline(cmd, g.client(cmd), args[0], pub)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.file, "file", "", "verify this saved certificate offline (\"-\": stdin)")
	fs.StringVar(&o.pubkey, "pubkey", "", `the signer's public key: "ed25519:<base64>" or a file holding it`)
	return cmd
}

// verifyOnline verifies certificate id as quasimd serves it, against pub or,
// when pub is nil, the daemon's own key.
func verifyOnline(cmd *cobra.Command, c *client.Client, id string, pub ed25519.PublicKey) error {
	ctx := cmd.Context()
	id, body, revoked, err := fetchCert(ctx, c, id)
	if err != nil {
		return err
	}
	if pub == nil {
		pk, err := c.Pubkey(ctx)
		if err != nil {
			return fmt.Errorf("get the daemon's public key: %w", err)
		}
		if pub, err = certs.ParsePublicKey(pk.Pubkey); err != nil {
			return fmt.Errorf("parse the daemon's public key %q: %w", pk.Pubkey, err)
		}
	}
	cert, err := certs.VerifyBytes(body, pub)
	if err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	if cert.ID != id {
		return fmt.Errorf("verify %s: quasimd served certificate %s instead", id, cert.ID)
	}
	if err := printVerified(cmd.OutOrStdout(), cert); err != nil {
		return err
	}
	if revoked != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "REVOKED: %s\n", revoked)
		return fmt.Errorf("certificate %s is revoked: %s", id, revoked)
	}
	return passed(cert)
}

// verifyFile verifies a saved certificate with no daemon.
func verifyFile(cmd *cobra.Command, file string, pub ed25519.PublicKey) error {
	var (
		body []byte
		err  error
	)
	if file == "-" {
		body, err = readLimited(cmd.InOrStdin())
	} else {
		body, err = readFile(file)
	}
	if err != nil {
		return badInput(fmt.Errorf("read certificate: %w", err))
	}
	cert, err := certs.VerifyBytes(body, pub)
	if err != nil {
		return fmt.Errorf("verify %s: %w", file, err)
	}
	w := cmd.OutOrStdout()
	if err := printVerified(w, cert); err != nil {
		return err
	}
	fmt.Fprintln(w, "revocation not checked (offline)")
	return passed(cert)
}

func printVerified(w io.Writer, cert *certs.Certificate) error {
	if err := cert.Report(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "signature OK, id OK")
	return err
}

// passed fails for a genuine certificate that records a failed check, or
// no check that was made: it does not certify its config.
func passed(cert *certs.Certificate) error {
	if cert.Passed() {
		return nil
	}
	for _, ch := range cert.Checks {
		if !ch.Passed && ch.NotMade() == "" {
			return fmt.Errorf("certificate %s records a failed check", cert.ID)
		}
	}
	return fmt.Errorf("certificate %s records no check that was made", cert.ID)
}

// loadPubkey reads --pubkey: an "ed25519:..." string, or a file holding one
// (as certs pubkey prints it) or holding certs pubkey --json's object.
func loadPubkey(s string) (ed25519.PublicKey, error) {
	const prefix = "ed25519:"
	if strings.HasPrefix(s, prefix) {
		pub, err := certs.ParsePublicKey(s)
		if err != nil {
			return nil, badInput(fmt.Errorf("parse --pubkey: %w", err))
		}
		return pub, nil
	}
	b, err := readFile(s)
	if err != nil {
		return nil, badInput(fmt.Errorf("read --pubkey: %w (want %q or a file holding it)", err, prefix+"<base64>"))
	}
	key := string(bytes.TrimSpace(b))
	if strings.HasPrefix(key, "{") {
		var pk api.Pubkey
		if err := json.Unmarshal(b, &pk); err != nil {
			return nil, badInput(fmt.Errorf("parse --pubkey %s: %w", s, err))
		}
		key = pk.Pubkey
	}
	pub, err := certs.ParsePublicKey(key)
	if err != nil {
		return nil, badInput(fmt.Errorf("parse --pubkey %s: %w", s, err))
	}
	return pub, nil
}

func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readLimited(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxFileBytes)
	}
	return b, nil
}

type certsRevokeOptions struct {
	reason string
}

func newCertsRevokeCommand(g *globalOptions) *cobra.Command {
	var o certsRevokeOptions
	cmd := &cobra.Command{
		Use:   "revoke ID --reason TEXT",
		Short: "Revoke a certificate; its job stops serving the config",
		Long: `revoke marks certificate ID revoked, with a reason that certs list and
certs show report. If its job serves the certified config, quasimd falls back
to the best config with a certificate still in force, or to the default, and
queues a re-verification. revoke prints what the job serves now.

Only operators may revoke (exit status 5 otherwise).`,
		Example: `  quasimctl certs revoke 3f2a9c0d17b4e5a8 --reason "wrong results on driver 550"`,
		Args:    exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.reason) == "" {
				return usagef("--reason is required: say why the certificate no longer holds")
			}
			c := g.client(cmd)
			ctx := cmd.Context()
			rr, err := c.Revoke(ctx, args[0], o.reason)
			if errors.Is(err, api.ErrNotFound) {
				id, rerr := resolveCertID(ctx, c, args[0])
				if rerr != nil {
					return rerr
				}
				if id != "" {
					rr, err = c.Revoke(ctx, id, o.reason)
				}
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, rr)
			}
			if rr.AlreadyRevoked {
				fmt.Fprintf(w, "%s was already revoked; nothing changed\n", rr.ID)
			} else {
				fmt.Fprintf(w, "revoked %s\n", rr.ID)
			}
			if rr.Served == "" {
				fmt.Fprintf(w, "%s now serves the default config\n", dash(rr.Job))
			} else {
				fmt.Fprintf(w, "%s now serves %s (certificate %s)\n", dash(rr.Job), rr.Served, dash(rr.Cert))
			}
			if rr.Requeued {
				fmt.Fprintln(w, "re-verification queued")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "why the certificate no longer holds (required)")
	return cmd
}

func newCertsPubkeyCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "pubkey",
		Short: "Print the public key quasimd signs certificates with",
		Long: `pubkey prints the daemon's public key as one line, "ed25519:<base64>",
exactly what certs verify --pubkey reads. --json adds its key id.`,
		Example: `  quasimctl certs pubkey > quasimd.pub`,
		Args:    exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			pk, err := g.client(cmd).Pubkey(cmd.Context())
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), pk)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), pk.Pubkey)
			return err
		},
	}
}

// fetchCert gets certificate id, or the one whose id starts with id, and
// returns its full id, its bytes as served and its revocation reason.
func fetchCert(ctx context.Context, c *client.Client, id string) (string, []byte, string, error) {
	body, revoked, err := c.Cert(ctx, id)
	if errors.Is(err, api.ErrNotFound) {
		full, rerr := resolveCertID(ctx, c, id)
		if rerr != nil {
			return "", nil, "", rerr
		}
		if full != "" {
			id = full
			body, revoked, err = c.Cert(ctx, id)
		}
	}
	if err != nil {
		return "", nil, "", err
	}
	return id, body, revoked, nil
}

// resolveCertID finds the one certificate whose id starts with prefix; ""
// when none does.
func resolveCertID(ctx context.Context, c *client.Client, prefix string) (string, error) {
	cs, err := c.Certs(ctx, "")
	if err != nil {
		return "", err
	}
	var ids []string
	for _, s := range cs.Certs {
		if strings.HasPrefix(s.ID, prefix) && s.ID != prefix {
			ids = append(ids, s.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		return ids[0], nil
	}
	n, more := len(ids), ""
	if n > 3 {
		ids, more = ids[:3], ", ..."
	}
	return "", usagef("certificate id %q is ambiguous: %d certificates start with it (%s%s)", prefix, n, strings.Join(ids, ", "), more)
}

// shortID is the start of a certificate id, as certs list prints it.
func shortID(id string) string {
	if len(id) > shortIDLen {
		return id[:shortIDLen]
	}
	return id
}
