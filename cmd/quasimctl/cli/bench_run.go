package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/evolve"
	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/internal/strategies"
)

// This file runs bench: every strategy on every space and seed, in parallel,
// then writes the traces and the report.

func runBench(ctx context.Context, cmd *cobra.Command, o benchOptions) error {
	if o.budget <= 0 || o.seeds <= 0 || o.batch <= 0 || o.jobs <= 0 {
		return usagef("--budget, --seeds, --batch and --jobs must be positive")
	}
	for _, s := range o.strategies {
		f, err := strategies.Parse(s)
		if err != nil {
			return usagef("%v", err)
		}
		if _, warm := f(oneParamSpace, 1).(evolve.WarmStarter); len(o.warmFrom) > 0 && !warm {
			return usagef("--warm-from: strategy %q takes no warm start (portfolio does)", s)
		}
	}
	named := slices.Clone(o.strategies)
	if len(o.warmFrom) > 0 {
		for _, st := range o.strategies {
			named = append(named, st+warmSuffix)
		}
	}
	if err := checkVersus(o.versus, named); err != nil {
		return err
	}
	var peers *peerFile
	if len(o.peers) > 0 {
		var err error
		if peers, err = loadPeers(o.peers); err != nil {
			return err
		}
	}
	stderr := cmd.ErrOrStderr()
	if o.quiet {
		stderr = io.Discard
	}
	start := time.Now()
	spaces, err := loadSpaces(o.spaces)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: loaded %d spaces in %s\n", len(spaces), time.Since(start).Round(time.Millisecond))
	var priors [][]genome.Config
	names := o.strategies
	if len(o.warmFrom) > 0 {
		if priors, err = warmPriors(o.warmFrom, spaces, stderr); err != nil {
			return err
		}
		for _, st := range o.strategies {
			names = append(names, st+warmSuffix)
		}
		o.strategies = names
	}

	type job struct {
		space    int
		strategy string
		seed     uint64
	}
	var jobs []job
	for i := range spaces {
		for _, st := range names {
			for seed := 1; seed <= o.seeds; seed++ {
				jobs = append(jobs, job{i, st, uint64(seed)})
			}
		}
	}
	runs := make([]evolve.BenchRun, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, lastReport := 0, time.Now()
	for range o.jobs {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				bs := spaces[j.space].BenchSpace
				base, warm := strings.CutSuffix(j.strategy, warmSuffix)
				f, _ := strategies.Get(base)
				if warm {
					f = warmFactory(f, priors[j.space])
				}
				runs[i], errs[i] = evolve.Run(ctx, bs, f, j.seed, evolve.RunOptions{
					Budget: o.budget, Batch: o.batch, RoundTripAt: o.roundTripAt, Clock: time.Now, Noise: o.noise,
				})
				runs[i].Strategy = j.strategy
				mu.Lock()
				done++
				if time.Since(lastReport) > 2*time.Second || done == len(jobs) {
					lastReport = time.Now()
					fmt.Fprintf(stderr, "bench: %d/%d runs (%s %s seed %d) %s\n", done, len(jobs), bs.Name, j.strategy, j.seed, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil {
			j := jobs[i]
			return fmt.Errorf("run %s on %s seed %d: %w", j.strategy, spaces[j.space].Name, j.seed, err)
		}
	}
	if o.trace != "" {
		if err := writeTraces(o.trace, runs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: wrote %d traces under %s\n", len(runs), o.trace)
	}
	byCell := map[string][]evolve.BenchRun{}
	for i, r := range runs {
		k := spaces[jobs[i].space].Name + "\x00" + jobs[i].strategy
		byCell[k] = append(byCell[k], r)
	}
	rep := report(o, spaces, func(space, strategy string) []evolve.BenchRun { return byCell[space+"\x00"+strategy] })
	if peers != nil {
		rep.Peers = comparePeers(peers, rep)
	}
	if o.report != "" {
		if err := writeBenchHTML(o.report, rep, peers); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: wrote %s\n", o.report)
	}
	if o.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", " ")
		return enc.Encode(rep)
	}
	printReport(cmd.OutOrStdout(), rep, o.strategies)
	return nil
}

// traceLine is one evaluation in a trace file.
type traceLine struct {
	Key    string   `json:"key"`
	Status string   `json:"status"`
	TimeMS *float64 `json:"time_ms"`
	By     string   `json:"by,omitempty"` // portfolio member that proposed it
	// ShownMS, under --noise, is the recorded repetition the strategy was
	// shown; TimeMS stays the recorded mean.
	ShownMS *float64 `json:"shown_ms,omitempty"`
}

func tracePath(dir, space, strategy string, seed uint64) string {
	return filepath.Join(dir, space, strategy, fmt.Sprintf("seed-%d.jsonl", seed))
}

func writeTraces(dir string, runs []evolve.BenchRun) error {
	for _, r := range runs {
		p := tracePath(dir, r.Space, r.Strategy, r.Seed)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		for _, m := range r.Trace {
			l := traceLine{Key: m.Key, Status: m.Status, By: m.By}
			if m.OK {
				t, shown := m.Time, m.Time
				l.TimeMS = &t
				if m.True > 0 {
					t = m.True
					l.ShownMS = &shown
				}
			}
			if err := enc.Encode(l); err != nil {
				f.Close()
				return fmt.Errorf("write trace %s: %w", p, err)
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("write trace %s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write trace %s: %w", p, err)
		}
	}
	return nil
}
