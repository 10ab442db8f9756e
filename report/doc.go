// Package report draws quasimd's tuning record as one self-contained HTML
// page: per job, the convergence of the search, the portfolio's allocation
// per cycle, every trial in a sortable table, the effect of each parameter
// with an importance measure, the (time, energy) Pareto front and the
// certificates. It takes what quasimctl fetches over the socket API (the
// api types) and writes HTML; it does no I/O of its own and imports only
// api.
//
// # Offline by construction
//
// The page loads nothing: the charts are SVG drawn here in Go, the styles
// and the little script that sorts and pages the trial tables are inline,
// and a Content-Security-Policy of default-src 'none' stops the browser
// from fetching anything even if a later edit slips a URL in. SVG drawn in
// Go was chosen over vendoring a chart library (Apache ECharts is 1.1 MB,
// plotly.js 4.8 MB): the charts here are scatter, step and bar charts that
// need no interaction beyond hover titles, the page stays small (tens of KB
// for the builtin kernels), there is no licence to carry, and the charts
// are there before any script runs.
//
// # Parameter importance
//
// A parameter's importance is its main-effect share of the variance of
// log time over the job's valid trials: the correlation ratio
// η² = Σ_v n_v (m_v − m)² / Σ_i (x_i − m)², where x_i is the log of trial
// i's time, m their mean and m_v, n_v the mean and count of the trials
// with the parameter at value v. It is the first-order term of a
// functional ANOVA (fANOVA) computed on the trials themselves rather than
// on a fitted surrogate: 1 means the parameter alone explains the spread
// of times, 0 that its values do not shift the mean. Log time is used
// because a parameter's effect on a kernel is a factor, not an offset.
// The trials are what the search chose to measure, not a uniform sample
// of the space, so on a short search the shares describe the region the
// search visited; on a brute-forced space (an imported cache) they are the
// space's own.
//
// # Roofline
//
// Jobs whose work is known (the builtin kernels) are drawn under the roofs
// quasimd measured (api.Ceilings): the float32 FMA peak on all threads and
// on one, the copy bandwidth from memory, and the copy bandwidth of
// buffers that fit each cache level. A job stands against the roof of the
// smallest level its working set (its compulsory bytes) fits in, or
// memory's, and the table names that level: a working set that fits in L2
// is not measured against a roof set by 64 MiB copies.
//
// # Served time and certificate
//
// The served time (api.Config.TimeMS) is the median of the certificate's
// latency, measured after the config was selected, with a bootstrap 95%
// CI of the median; the search's time stays in the trial. The page shows
// both and flags a served time outside that interval (one an older
// quasimd served from the search, or from another machine). The speed-up
// over the default is the certificate's, from rounds that measured the
// two in turn, with its 95% interval.
//
// # Two parameters
//
// A heat map of the two most important parameters (by the importance
// above), each cell the best time of that pair of values, and parallel
// coordinates of every trial over all parameters and its time.
//
// Jobs with nothing measured (no trial, cycle, certificate or served
// config) are listed last with the reason the listing gives, not drawn as
// empty views.
//
// This package has no compatibility promise outside quasim.
package report
