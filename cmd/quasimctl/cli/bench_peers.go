package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/quasim/quasim/evolve"
)

// This file loads peer score files (--peers) and compares the report with them.

// peerFile is the kernel_tuner.json format: per space, per strategy, the
// mean fraction at each k and the median evaluations to 95%. Several files
// load as one: their strategies side by side.
type peerFile struct {
	Source string `json:"source"`
	raw    map[string]map[string]map[string]any
	// covered lists, per file, the spaces it has: the comparison keeps the
	// spaces every file has, so every peer strategy is scored on the same.
	covered []map[string]bool
	from    map[string]string // strategy -> its file's base name, without .json
}

func loadPeers(paths []string) (*peerFile, error) {
	pf := &peerFile{raw: map[string]map[string]map[string]any{}}
	from := map[string]string{} // strategy -> file that has it
	var sources []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--peers: %w", err)
		}
		var f struct {
			Source string                               `json:"source"`
			Spaces map[string]map[string]map[string]any `json:"spaces"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("--peers %s: %w", path, err)
		}
		if len(f.Spaces) == 0 {
			return nil, fmt.Errorf("--peers %s: no \"spaces\"", path)
		}
		cov := map[string]bool{}
		for sp, strats := range f.Spaces {
			cov[sp] = true
			if pf.raw[sp] == nil {
				pf.raw[sp] = map[string]map[string]any{}
			}
			for n, cell := range strats {
				if prev, ok := from[n]; ok && prev != path {
					return nil, fmt.Errorf("--peers: strategy %q is in both %s and %s", n, prev, path)
				}
				from[n] = path
				pf.raw[sp][n] = cell
			}
		}
		pf.covered = append(pf.covered, cov)
		if f.Source != "" {
			sources = append(sources, f.Source)
		}
	}
	pf.Source = strings.Join(sources, "; ")
	pf.from = map[string]string{}
	for n, path := range from {
		pf.from[n] = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	return pf, nil
}

// covers reports whether every peer file has space sp.
func (p *peerFile) covers(sp string) bool {
	for _, c := range p.covered {
		if !c[sp] {
			return false
		}
	}
	return len(p.covered) > 0
}

type peerBest struct {
	Strategy string  `json:"strategy"`
	File     string  `json:"file"` // the peer file it is from, without .json
	Value    float64 `json:"value"`
}

// peerComparison sets quasim's strategies beside the peers' on the spaces
// both were run on.
type peerComparison struct {
	Source string                     `json:"source"`
	Spaces []string                   `json:"spaces"`
	Mean   []evolve.Score             `json:"mean"`      // ours, over the common spaces
	Peer   map[string]map[int]float64 `json:"peer_mean"` // theirs, over the common spaces
	Best   map[int]peerBest           `json:"peer_best"`
	// Wins counts, per strategy of ours and k, the common spaces on which
	// it beats, on that space, the peer strategy best on the mean at k.
	Wins map[string]map[int]int `json:"wins"`
	// To95 is, per common space, the peers' lowest median evaluations to
	// 95% and whose it is; nil Value when none of them got there.
	To95 map[string]peerTo95 `json:"peer_best_to95"`
}

type peerTo95 struct {
	Strategy string   `json:"strategy,omitempty"`
	Value    *float64 `json:"value"`
}

func comparePeers(p *peerFile, rep benchReport) *peerComparison {
	pc := &peerComparison{Source: p.Source, Peer: map[string]map[int]float64{}, Best: map[int]peerBest{}}
	for _, s := range rep.Spaces {
		if p.covers(s.Name) {
			pc.Spaces = append(pc.Spaces, s.Name)
		}
	}
	if len(pc.Spaces) == 0 {
		return pc
	}
	for _, st := range rep.Mean {
		var per []evolve.Score
		for _, sc := range rep.Scores {
			if sc.Strategy == st.Strategy && slices.Contains(pc.Spaces, sc.Space) {
				per = append(per, sc)
			}
		}
		pc.Mean = append(pc.Mean, evolve.Mean(st.Strategy, per, rep.Ks))
	}
	var names []string
	for n := range p.raw[pc.Spaces[0]] {
		names = append(names, n)
	}
	sort.Strings(names) // every file's strategies, side by side
	for _, n := range names {
		m := map[int]float64{}
		complete := true
		for _, sp := range pc.Spaces {
			cell, ok := p.raw[sp][n]
			if !ok {
				complete = false
				break
			}
			for _, k := range rep.Ks {
				v, _ := cell[strconv.Itoa(k)].(float64)
				m[k] += v / float64(len(pc.Spaces))
			}
		}
		if !complete {
			continue
		}
		pc.Peer[n] = m
		for _, k := range rep.Ks {
			if b, ok := pc.Best[k]; !ok || m[k] > b.Value+1e-12 {
				pc.Best[k] = peerBest{Strategy: n, File: p.from[n], Value: m[k]}
			}
		}
	}
	for k, b := range pc.Best {
		b.Value = math.Round(b.Value*1e4) / 1e4
		pc.Best[k] = b
	}
	pc.Wins = map[string]map[int]int{}
	for _, st := range rep.Mean {
		pc.Wins[st.Strategy] = map[int]int{}
		for _, sc := range rep.Scores {
			if sc.Strategy != st.Strategy || !slices.Contains(pc.Spaces, sc.Space) {
				continue
			}
			for _, k := range rep.Ks {
				theirs, _ := p.raw[sc.Space][pc.Best[k].Strategy][strconv.Itoa(k)].(float64)
				if sc.At[k] > theirs {
					pc.Wins[st.Strategy][k]++
				}
			}
		}
	}
	pc.To95 = map[string]peerTo95{}
	for _, sp := range pc.Spaces {
		var b peerTo95
		for _, n := range names {
			v, ok := p.raw[sp][n]["evals_to_95"].(float64)
			if ok && (b.Value == nil || v < *b.Value) {
				b = peerTo95{Strategy: n, Value: &v}
			}
		}
		pc.To95[sp] = b
	}
	return pc
}
