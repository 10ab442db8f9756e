package pipeline

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints rep as a table: per perturbation, where its stage lies,
// the predicted and measured change of end-to-end time (median and 95%
// bootstrap interval, percent) and the error, then the summary.
func (rep Report) WriteTable(w io.Writer) error {
	b := rep.Baseline
	fmt.Fprintf(w, "baseline end to end: median %.3f ms [95%% CI %.3f, %.3f] over %d iterations\n", b.Median, b.Lo, b.Hi, b.N)
	if len(rep.Results) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "perturbation\tstage on path\tbase ms\tpredicted %%\t[95%% CI]\tmeasured %%\t[95%% CI]\terror pts\tcheck\n")
	for _, r := range rep.Results {
		check := "inside"
		switch {
		case r.Outside > Tolerance:
			check = fmt.Sprintf("OUT by %.1f", r.Outside)
		case r.Outside > 0:
			check = fmt.Sprintf("within %.1f", r.Outside)
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%.2f\t%+.1f\t[%+.1f, %+.1f]\t%+.1f\t[%+.1f, %+.1f]\t%.1f\t%s\n",
			r.Perturbation, 100*r.OnPath, r.BaseMS, r.Predicted.Median, r.Predicted.Lo, r.Predicted.Hi,
			r.Measured.Median, r.Measured.Lo, r.Measured.Hi, r.Error, check)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d perturbations x %d runs: mean error %.2f, worst %.2f points of end-to-end time; %d of %d predictions inside the measured 95%% interval or within %.0f points of it\n",
		len(rep.Results), rep.Runs, rep.MeanError, rep.WorstError, rep.Within, len(rep.Results), Tolerance)
	return err
}
