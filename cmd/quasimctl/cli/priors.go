package cli

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/internal/priors"
	"github.com/quasim/quasim/internal/spec"
)

// priorsExt ends a prior pack's name (quasimd reads *.qprior in its priors
// directory).
const priorsExt = ".qprior"

func newPriorsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "priors",
		Short: "Build and inspect prior packs, which new jobs warm-start from",
		Long: `A prior pack holds what recorded tuning runs measured (Kernel Tuner cache
files, FAIR T4 results, quasimctl export's files), reduced to each config's
rank on its device. quasimd --priors loads packs (by default every *.qprior
file in /etc/quasim/priors.d) and warm-starts a new job from the sources of
its kernel: matched by the kernel's source SHA-256 when both sides know it,
else by name (the spec's name, or the kernel function's own, which Kernel
Tuner records). quasimctl kernels says which prior a job started from.`,
		Args: exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error { return usagef("priors: name a subcommand (build or show)") },
	}
	cmd.AddCommand(newPriorsBuildCommand(), newPriorsShowCommand(g))
	return cmd
}

func newPriorsBuildCommand() *cobra.Command {
	var output string
	var sources []string
	cmd := &cobra.Command{
		Use:   "build PATH... -o FILE [--source KERNEL=FILE]",
		Short: "Build a prior pack from recordings (files or directories)",
		Long: `build reads every recording named (files, or the .json and .json.gz files of
directories: Kernel Tuner caches, FAIR T4 results, quasimctl export's files)
and writes a prior pack. --source KERNEL=FILE[,FILE...] records the SHA-256
of a kernel's source files (in the order its spec lists them) with its
recordings, so that quasimd matches them to a source kernel (an OpenCL
spec) by its source rather than by name.`,
		Example: `  quasimctl priors build ../shared/spaces -o /etc/quasim/priors.d/hub.qprior`,
		Args:    minArgs(1, "PATH..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return usagef("priors build: -o FILE is required")
			}
			hashes := map[string]string{}
			for _, s := range sources {
				kernel, files, ok := strings.Cut(s, "=")
				if !ok || kernel == "" || files == "" {
					return usagef("--source %q: want KERNEL=FILE[,FILE...]", s)
				}
				var sums []string
				for _, f := range strings.Split(files, ",") {
					data, err := os.ReadFile(f)
					if err != nil {
						return usagef("--source %s: %w", kernel, err)
					}
					sum := sha256.Sum256(data)
					sums = append(sums, hex.EncodeToString(sum[:]))
				}
				hashes[kernel] = spec.SourceHash(sums)
			}
			spaces, err := loadSpacesFlag("PATH", args)
			if err != nil {
				return err
			}
			p := &priors.Pack{Format: priors.Format, Version: priors.Version, Built: time.Now().UTC()}
			used := map[string]bool{}
			for _, bs := range spaces {
				in := priorInput(bs)
				if in.Kernel == "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "priors: %s: skipped: the recording names no kernel, so no job could match it\n", bs.Name)
					continue
				}
				in.SourceSHA256 = hashes[in.Kernel]
				used[in.Kernel] = true
				src, err := priors.NewSource(in)
				if err != nil {
					return badInput(err)
				}
				p.Sources = append(p.Sources, src)
				fmt.Fprintf(cmd.ErrOrStderr(), "priors: %s: kernel %s on %s, %d valid and %d failed configs\n",
					bs.Name, dash(in.Kernel), dash(in.Device), src.Valid(), src.NumFailed())
			}
			if len(p.Sources) == 0 {
				return badInput(fmt.Errorf("priors build: none of the recordings names its kernel"))
			}
			for k := range hashes {
				if !used[k] {
					return usagef("--source %s: no recording of kernel %q was given", k, k)
				}
			}
			var buf bytes.Buffer
			if err := priors.Encode(&buf, p); err != nil {
				return err
			}
			if err := writeFileAtomic(output, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "priors: wrote %s: %d sources, %d bytes\n", output, len(p.Sources), buf.Len())
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "the pack to write")
	cmd.Flags().StringArrayVar(&sources, "source", nil, "KERNEL=FILE[,FILE...]: the source files of a kernel's recordings, matched by their SHA-256 (repeatable)")
	return cmd
}

// priorInput is a loaded recording as a pack's input: its objective value
// per config, negated when higher is better.
func priorInput(bs benchSpace) priors.Input {
	rec := bs.rec
	obj, maximize, _ := rec.Objective()
	in := priors.Input{Name: bs.Name, Kernel: rec.Kernel, Device: rec.Device(), Objective: obj, Maximized: maximize, Space: bs.Space}
	if len(rec.Problem) > 0 {
		dims := make([]string, len(rec.Problem))
		for i, d := range rec.Problem {
			dims[i] = strconv.Itoa(d)
		}
		in.Problem = strings.Join(dims, "x")
	}
	for _, c := range bs.Space.All() {
		tr, ok := rec.Trial(bs.Space.Key(c))
		if !ok {
			continue
		}
		v, ok := rec.Value(tr)
		if maximize {
			v = -v
		}
		in.Results = append(in.Results, priors.Result{Config: c, OK: ok, Value: v})
	}
	return in
}

func newPriorsShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show FILE",
		Short: "List a prior pack's sources",
		Args:  exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := readPackFile(args[0])
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: built %s, %d sources\n", args[0], p.Built.Format(time.RFC3339), len(p.Sources))
			t := newTable(cmd.OutOrStdout(), "SOURCE", "KERNEL", "DEVICE", "PROBLEM", "OBJECTIVE", "PARAMS", "VALID", "FAILED", "SOURCE_SHA256")
			for _, s := range p.Sources {
				sum := dash(s.SourceSHA256)
				if len(sum) > 12 {
					sum = sum[:12]
				}
				obj := cmp.Or(s.Objective, "time")
				if s.Maximized {
					obj += " (max)"
				}
				t.row(s.Name, dash(s.Kernel), dash(s.Device), dash(s.Problem), obj, strconv.Itoa(len(s.Params)),
					strconv.Itoa(s.Valid()), strconv.Itoa(s.NumFailed()), sum)
			}
			return t.flush()
		},
	}
}

// readPackFile reads a prior pack: a usage error when it cannot be read,
// bad input naming the file when it does not decode.
func readPackFile(path string) (*priors.Pack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("%w", err)
	}
	defer f.Close()
	p, err := priors.Read(f)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", path, err))
	}
	return p, nil
}
