package cli

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/quasim/quasim/evolve"
	htmlreport "github.com/quasim/quasim/report"
)

// writeBenchHTML writes bench's scores as the page of --report FILE.
func writeBenchHTML(file string, rep benchReport, peers *peerFile) error {
	in := htmlreport.Bench{Source: "quasimctl bench", Generated: time.Now(), Budget: rep.Budget, Seeds: rep.Seeds, Ks: rep.Ks}
	var pc *peerComparison
	if peers != nil {
		in.PeersFrom = peers.Source
		pc = rep.Peers
	}
	curves := func(scores []evolve.Score) []htmlreport.Curve {
		var cs []htmlreport.Curve
		for _, s := range scores {
			cs = append(cs, htmlreport.Curve{Name: s.Strategy, At: s.At, EvalsTo95: s.EvalsTo95})
		}
		return cs
	}
	peerCurves := func(m map[string]map[int]float64) []htmlreport.Curve {
		var cs []htmlreport.Curve
		for _, n := range sortedKeys(m) {
			cs = append(cs, htmlreport.Curve{Name: n, At: m[n]})
		}
		return cs
	}
	if len(rep.Spaces) > 1 {
		mean := htmlreport.BenchSpace{Name: fmt.Sprintf("mean over %d spaces", len(rep.Spaces)), Ours: curves(rep.Mean), Random: rep.RandomMean}
		if pc != nil && len(pc.Spaces) == len(rep.Spaces) {
			mean.Peers = peerCurves(pc.Peer)
		}
		in.Spaces = append(in.Spaces, mean)
		if pc != nil && len(pc.Spaces) > 0 && len(pc.Spaces) < len(rep.Spaces) {
			common := htmlreport.BenchSpace{Name: fmt.Sprintf("mean over the %d spaces the peers ran", len(pc.Spaces)), Ours: curves(pc.Mean), Peers: peerCurves(pc.Peer), Random: map[int]float64{}}
			for _, sp := range pc.Spaces {
				for k, v := range rep.RandomExp[sp] {
					common.Random[k] += v / float64(len(pc.Spaces))
				}
			}
			in.Spaces = append(in.Spaces, common)
		}
	}
	for _, s := range rep.Spaces {
		bs := htmlreport.BenchSpace{Name: s.Name, Configs: s.Configs, Valid: s.Valid, OptimumMS: s.Optimum, Device: s.Device, Random: rep.RandomExp[s.Name]}
		for _, sc := range rep.Scores {
			if sc.Space == s.Name {
				bs.Ours = append(bs.Ours, htmlreport.Curve{Name: sc.Strategy, At: sc.At, EvalsTo95: sc.EvalsTo95})
			}
		}
		if peers != nil {
			cells := peers.raw[s.Name]
			for _, n := range sortedKeys(cells) {
				c := htmlreport.Curve{Name: n, At: map[int]float64{}}
				for _, k := range rep.Ks {
					if v, ok := cells[n][strconv.Itoa(k)].(float64); ok {
						c.At[k] = v
					}
				}
				if v, ok := cells[n]["evals_to_95"].(float64); ok {
					c.EvalsTo95 = &v
				}
				bs.Peers = append(bs.Peers, c)
			}
		}
		in.Spaces = append(in.Spaces, bs)
	}
	var b bytes.Buffer
	if err := htmlreport.WriteBench(&b, in); err != nil {
		return err
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
