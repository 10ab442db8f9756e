package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newReloadCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Make the daemon re-read its kernel specs (like SIGHUP); exits 6 when a spec file did not load",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rr, err := g.client(cmd).Reload(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				if err := printJSON(w, rr); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "kernels loaded: %d\n", rr.Kernels)
				for _, e := range rr.Errors {
					fmt.Fprintf(w, "  error: %s\n", e)
				}
			}
			// As status: a spec file that did not load needs the operator.
			if n := len(rr.Errors); n > 0 {
				return exitCode{exitUnhealthy, fmt.Errorf("%s did not load (the others did)", plural(n, "spec file"))}
			}
			return nil
		},
	}
}
