package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/api"
)

type exportOptions struct {
	format  string
	problem string
	device  string
	output  string
}

func newExportCommand(g *globalOptions) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export KERNEL --format t4 [--problem P] [--device D] [-o FILE]",
		Short: "Export a kernel's trials as a FAIR T4 results file",
		Long: `export writes the stored trials of one job of KERNEL (one problem size on one
device class) as a FAIR T4 results file (schema 1.0.0, times in
milliseconds), which Kernel Tuner tools and quasimctl bench read back.

When the kernel has trials of more than one job, pick one with --problem and
--device. Only --format t4 is supported.`,
		Example: `  quasimctl export sgemm --format t4 --problem 256,256,256 -o sgemm_t4.json`,
		Args:    exactArgs(1, "KERNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd, g, o, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.format, "format", "t4", "output format (only t4)")
	fs.StringVar(&o.problem, "problem", "", "only this problem size")
	fs.StringVar(&o.device, "device", "", "only this device class")
	fs.StringVarP(&o.output, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}

func runExport(cmd *cobra.Command, g *globalOptions, o exportOptions, kernel string) error {
	if o.format != "t4" {
		return usagef("export: unsupported --format %q (only t4)", o.format)
	}
	c := g.client(cmd)
	ks, err := c.Kernels(cmd.Context())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ks, func(k api.Kernel) bool { return k.Name == kernel })
	if i < 0 {
		return fmt.Errorf("export: kernel %q: %w", kernel, api.ErrNotFound)
	}
	tr, err := c.Trials(cmd.Context(), kernel, o.problem)
	if err != nil {
		return err
	}
	trials := tr.Trials[:0:0]
	jobs := map[string]bool{}
	for _, t := range tr.Trials {
		if (o.problem == "" || t.Problem == o.problem) && (o.device == "" || t.Device == o.device) {
			trials = append(trials, t)
			jobs[t.Problem+" on "+t.Device] = true
		}
	}
	if len(trials) == 0 {
		return fmt.Errorf("export: no trials of %s to export: %w", kernel, api.ErrNotFound)
	}
	if len(jobs) > 1 {
		names := make([]string, 0, len(jobs))
		for j := range jobs {
			names = append(names, j)
		}
		slices.Sort(names)
		return usagef("export: %s has trials of %d jobs (%s); pick one with --problem and --device", kernel, len(jobs), strings.Join(names, "; "))
	}
	doc, err := t4Results(ks[i].Params, trials, time.Now())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if o.output == "" || o.output == "-" {
		_, err = cmd.OutOrStdout().Write(b)
		return err
	}
	if err := os.WriteFile(o.output, b, 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "exported %d trials of %s to %s\n", len(trials), kernel, o.output)
	return nil
}

// A FAIR T4 results file, fields in schema order.
type (
	t4Doc struct {
		SchemaVersion string     `json:"schema_version"`
		Metadata      t4Metadata `json:"metadata"`
		Results       []t4Result `json:"results"`
	}
	t4Metadata struct {
		TimeUnit string `json:"timeunit"`
	}
	t4Result struct {
		Timestamp     string          `json:"timestamp"`
		Configuration json.RawMessage `json:"configuration"` // parameters in the kernel's order
		Times         t4Times         `json:"times"`
		Invalidity    string          `json:"invalidity"`
		Correctness   int             `json:"correctness"`
		Measurements  []t4Measurement `json:"measurements"`
		Objectives    []string        `json:"objectives"`
	}
	// t4Times is Kernel Tuner's "times" (kernel_tuner/file_utils.py):
	// each phase in ms. benchmark is written when known: recorded, or a
	// trial's whole measuring cost when it records no phases.
	t4Times struct {
		Compilation     float64   `json:"compilation"`
		Benchmark       *float64  `json:"benchmark,omitempty"`
		Framework       float64   `json:"framework"`
		SearchAlgorithm float64   `json:"search_algorithm"`
		Validation      float64   `json:"validation"`
		Runtimes        []float64 `json:"runtimes"`
	}
	t4Measurement struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Unit  string `json:"unit"`
	}
)

// t4Invalidity maps trial statuses to T4 invalidity classes and the failure
// strings Kernel Tuner records in place of a time.
var t4Invalidity = map[string]struct{ invalidity, failure string }{
	"ok":           {"correct", ""},
	"invalid":      {"constraints", "InvalidConfig"},
	"constraints":  {"constraints", "InvalidConfig"},
	"compile":      {"compile", "CompilationFailedConfig"},
	"runtime":      {"runtime", "RuntimeFailedConfig"},
	"timeout":      {"timeout", "timeout"},
	"wrong_result": {"correctness", "wrong_result"},
}

// t4TimeUnit is the metadata time unit as Kernel Tuner spells it in the
// T4 files it writes (the FAIR benchmark hub's files carry it too).
const t4TimeUnit = "miliseconds"

// t4Results builds a T4 document from trials of one job; params names the
// values of each trial's key, in order. now stamps trials without a time.
// It writes what Kernel Tuner writes: the objective time (unit ms), the
// other observables (unit ""), energy and power as Kernel Tuner's NVML
// observer names them (nvml_energy in J, nvml_power in W), every phase
// time in ms, and the trial's own timestamp.
func t4Results(params []string, trials []api.Trial, now time.Time) (t4Doc, error) {
	if len(params) == 0 {
		return t4Doc{}, fmt.Errorf("the kernel lists no parameters")
	}
	doc := t4Doc{SchemaVersion: "1.0.0", Metadata: t4Metadata{TimeUnit: t4TimeUnit}, Results: make([]t4Result, 0, len(trials))}
	for _, t := range trials {
		cfg, err := t4Configuration(params, t.Key)
		if err != nil {
			return t4Doc{}, err
		}
		inv, ok := t4Invalidity[t.Status]
		if !ok {
			inv.invalidity, inv.failure = "runtime", t.Status
		}
		at := t.At
		if at.IsZero() {
			at = now
		}
		r := t4Result{
			Timestamp:     at.UTC().Format(time.RFC3339Nano),
			Configuration: cfg,
			Times:         t4PhaseTimes(t),
			Invalidity:    inv.invalidity,
			Measurements:  []t4Measurement{{Name: "time", Value: inv.failure, Unit: "ms"}},
			Objectives:    []string{"time"},
		}
		if t.Status == "ok" {
			r.Correctness = 1
			r.Measurements[0].Value = t.TimeMS
		}
		r.Measurements = append(r.Measurements, t4Observables(t)...)
		doc.Results = append(doc.Results, r)
	}
	return doc, nil
}

// t4PhaseTimes is a trial's "times": its recorded phases, or for a trial
// that records none (measured by quasimd) its whole cost as benchmark.
func t4PhaseTimes(t api.Trial) t4Times {
	ph := t.PhasesMS
	out := t4Times{
		Compilation: ph["compilation"], Framework: ph["framework"], SearchAlgorithm: ph["search_algorithm"],
		Validation: ph["validation"], Runtimes: t.TimesMS,
	}
	if b, ok := ph["benchmark"]; ok {
		out.Benchmark = &b
	} else if len(ph) == 0 && t.CostS > 0 {
		b := t.CostS * 1000
		out.Benchmark = &b
	}
	if out.Runtimes == nil {
		out.Runtimes = []float64{}
	}
	return out
}

// t4Observables are a trial's other measurements, sorted by name, with
// energy and power under the NVML observer's names unless recorded so.
func t4Observables(t api.Trial) []t4Measurement {
	obs := maps.Clone(t.Observables)
	if obs == nil {
		obs = map[string]float64{}
	}
	if _, ok := obs["nvml_energy"]; !ok && t.EnergyMJ > 0 {
		obs["nvml_energy"] = t.EnergyMJ / 1000
	}
	if _, ok := obs["nvml_power"]; !ok && t.PowerW > 0 {
		obs["nvml_power"] = t.PowerW
	}
	out := make([]t4Measurement, 0, len(obs))
	for _, name := range slices.Sorted(maps.Keys(obs)) {
		unit := ""
		if strings.HasPrefix(name, "time") {
			unit = "ms" // as Kernel Tuner labels its time columns
		}
		out = append(out, t4Measurement{Name: name, Value: obs[name], Unit: unit})
	}
	return out
}

// t4Configuration splits a config key into a JSON object of params: numbers
// stay numbers as written, True and False become booleans, the rest strings.
func t4Configuration(params []string, key string) (json.RawMessage, error) {
	vals := strings.Split(key, ",")
	if len(vals) != len(params) {
		return nil, fmt.Errorf("config key %q has %d values, want %d (%s)", key, len(vals), len(params), strings.Join(params, ","))
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p)
		b.Write(name)
		b.WriteByte(':')
		b.Write(t4Value(vals[i]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func t4Value(s string) []byte {
	switch s {
	case "True":
		return []byte("true")
	case "False":
		return []byte("false")
	}
	if s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && json.Valid([]byte(s)) {
		return []byte(s)
	}
	b, _ := json.Marshal(s)
	return b
}
