package cli

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/evaluate"
	"github.com/quasim/quasim/evaluate/replay"
)

// importBatch is how many trials one import request carries, which keeps
// each body well under api.MaxBodyBytes.
const importBatch = 2000

type importOptions struct {
	kernel  string
	problem string
	device  string
}

func newImportCommand(g *globalOptions) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE --kernel K [--problem P] [--device D]",
		Short: "Import recorded trials from a Kernel Tuner cache or FAIR T4 file",
		Long: `import reads a Kernel Tuner cache file or a FAIR T4 results file (.json or
.json.gz) and stores its measured configs as trials of kernel K for one
problem size and device class. Configs outside the kernel's space, or already
stored, are skipped.

--problem defaults to the problem size the file records, --device to its
device (as a device class); a file that records neither needs the flags.`,
		Example: `  quasimctl import gemm_cache.json --kernel gemm
  quasimctl import results_t4.json --kernel gemm --problem 4096,4096,4096 --device "nvidia/NVIDIA A100-PCIE-40GB"`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, g, o, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.kernel, "kernel", "", "kernel to import into (required)")
	fs.StringVar(&o.problem, "problem", "", "problem size, comma separated (default: the file's)")
	fs.StringVar(&o.device, "device", "", "device class (default: the file's device)")
	return cmd
}

func runImport(cmd *cobra.Command, g *globalOptions, o importOptions, file string) error {
	if o.kernel == "" {
		return usagef("import: --kernel is required")
	}
	rec, err := replay.Load(file)
	if err != nil {
		return badInput(fmt.Errorf("import: %w", err))
	}
	req, err := importRequest(rec, o.problem, o.device, time.Now().UTC())
	if err != nil {
		return err
	}
	c := g.client(cmd)
	var total api.ImportResponse
	for start := 0; start < len(req.Trials) || start == 0; start += importBatch {
		part := req
		part.Trials = req.Trials[start:min(start+importBatch, len(req.Trials))]
		r, err := c.Import(cmd.Context(), o.kernel, part)
		if err != nil {
			return err
		}
		if total.Job == "" {
			total.Job = r.Job
		}
		total.Stored += r.Stored
		total.Skipped += r.Skipped
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), total)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "imported %s into %s (job %s, problem %s, device %s): %d stored, %d skipped\n",
		file, o.kernel, dash(total.Job), req.Problem, req.Device, total.Stored, total.Skipped)
	return nil
}

// importRequest turns a recording into an import request; problem and device
// override the recorded ones. Trials keep their recorded timestamps, timing
// phases and observables; those recorded without a timestamp are stamped at.
// A recording whose objective is not time keeps its objective among the
// observables and its recorded time as the trial's time.
func importRequest(rec *replay.Recording, problem, device string, at time.Time) (api.ImportRequest, error) {
	if problem == "" {
		dims := make([]string, len(rec.Problem))
		for i, d := range rec.Problem {
			dims[i] = strconv.Itoa(d)
		}
		problem = strings.Join(dims, ",")
	}
	if problem == "" {
		return api.ImportRequest{}, usagef("import: %s records no problem size; pass --problem", rec.Name)
	}
	if device == "" {
		device = rec.Device()
	}
	if device == "" || device == "unknown" {
		return api.ImportRequest{}, usagef("import: %s records no device; pass --device", rec.Name)
	}
	sp, err := rec.Space(evaluate.Problem{})
	if err != nil {
		return api.ImportRequest{}, badInput(fmt.Errorf("import: %w", err))
	}
	req := api.ImportRequest{Problem: problem, Device: device, Trials: make([]api.Trial, 0, rec.Len())}
	objective, _, rule := rec.Objective()
	for _, cfg := range sp.All() {
		t, ok := rec.Trial(sp.Key(cfg))
		if !ok {
			continue
		}
		ms, obs := t.Time, t.Observables
		if objective != "time" || rule != replay.RuleRatio {
			ms = obs["time"]
			obs = maps.Clone(obs)
			delete(obs, "time")
		}
		if t.OK() && !(ms > 0) {
			return api.ImportRequest{}, fmt.Errorf("import: %s: config %s: the objective is %s and no time is recorded; quasim stores a time for every valid trial", rec.Name, t.Key, objective)
		}
		stamp := t.At
		if stamp.IsZero() {
			stamp = at
		}
		req.Trials = append(req.Trials, api.Trial{
			Key:         t.Key,
			Status:      string(t.Status),
			TimeMS:      ms,
			TimesMS:     t.Times,
			CostS:       t.Cost,
			Error:       t.Error,
			At:          stamp,
			Problem:     problem,
			Device:      device,
			EnergyMJ:    t.EnergyMJ,
			PowerW:      t.PowerW,
			PhasesMS:    t.PhasesMS,
			Observables: obs,
		})
	}
	if len(req.Trials) != rec.Len() {
		return api.ImportRequest{}, fmt.Errorf("import: %s: %d of %d recorded configs are in its space", rec.Name, len(req.Trials), rec.Len())
	}
	return req, nil
}
