package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newReloadCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Make the daemon re-read its kernel specs (like SIGHUP)",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rr, err := g.client(cmd).Reload(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return printJSON(w, rr)
			}
			fmt.Fprintf(w, "kernels loaded: %d\n", rr.Kernels)
			for _, e := range rr.Errors {
				fmt.Fprintf(w, "  error: %s\n", e)
			}
			return nil
		},
	}
}
