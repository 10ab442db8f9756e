package cli

import "github.com/spf13/cobra"

func newCausalCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "causal",
		Short: "Causal profiling of kernel pipelines",
	}
	cmd.AddCommand(newCausalCheckCommand(g))
	return cmd
}
