package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/internal/version"
)

// newVersionCommand prints quasimctl's version and commit, and the
// daemon's when one answers (within a second: a version must not hang).
func newVersionCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print quasimctl's version and commit, and the daemon's when it answers",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := struct {
				Quasimctl string `json:"quasimctl"`
				Quasimd   string `json:"quasimd,omitempty"`
				Error     string `json:"quasimd_error,omitempty"`
			}{Quasimctl: version.String()}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Second)
			defer cancel()
			if st, err := g.client(cmd).Status(ctx); err == nil {
				out.Quasimd = st.Version
			} else {
				out.Error = err.Error()
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, out)
			}
			fmt.Fprintln(w, "quasimctl", out.Quasimctl)
			if out.Quasimd != "" {
				fmt.Fprintln(w, "quasimd  ", out.Quasimd)
			} else {
				fmt.Fprintln(w, "quasimd   (no answer:", out.Error+")")
			}
			return nil
		},
	}
}
