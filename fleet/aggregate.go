package fleet

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/quasim/quasim/certs"
)

// The federated aggregate ranks a kernel's configs on a device class
// across the fleet without any node reading another's trials: each node
// publishes its Contribution (for every config it measured, the rank
// quantile of its time among the configs it measured at that problem,
// averaged over its problems), and anyone combines the contributions
// (Combine): each config's quantile averaged over the nodes that measured
// it, with how many did.

// Measured is one config's outcome at one problem, as a node contributes
// it.
type Measured struct {
	Problem string
	Key     string
	OK      bool
	TimeMS  float64
}

// Contribution is one node's ranking of a kernel's configs on a device
// class: quantile 0 is the fastest config it measured at a problem, 1 the
// slowest; configs that never ran ok are left out.
type Contribution struct {
	V         int                `json:"v"`
	Kernel    string             `json:"kernel"`
	Device    string             `json:"device"`
	Node      string             `json:"node"`
	Quantiles map[string]float64 `json:"quantiles"` // config key -> mean rank quantile
	Problems  int                `json:"problems"`
	At        time.Time          `json:"at"`
	Reporter  string             `json:"reporter"` // key id
	Signature string             `json:"signature"`
}

// Contribute computes a node's quantiles from its measurements: per
// problem, the ok configs ranked by time (ties share their mean rank),
// rank r of n giving r/(n-1) (0 when n is 1); then each config's mean over
// the problems where it ran ok. It does no I/O.
func Contribute(kernel, device string, ms []Measured) Contribution {
	byProblem := map[string]map[string]float64{}
	for _, m := range ms {
		if !m.OK {
			continue
		}
		if byProblem[m.Problem] == nil {
			byProblem[m.Problem] = map[string]float64{}
		}
		if t, ok := byProblem[m.Problem][m.Key]; !ok || m.TimeMS < t {
			byProblem[m.Problem][m.Key] = m.TimeMS
		}
	}
	sum, count := map[string]float64{}, map[string]int{}
	for _, times := range byProblem {
		keys := slices.Sorted(maps.Keys(times))
		sort.SliceStable(keys, func(i, j int) bool { return times[keys[i]] < times[keys[j]] })
		n := len(keys)
		for i := 0; i < n; {
			j := i
			for j+1 < n && times[keys[j+1]] == times[keys[i]] {
				j++
			}
			q := 0.0
			if n > 1 {
				q = (float64(i+j) / 2) / float64(n-1)
			}
			for k := i; k <= j; k++ {
				sum[keys[k]] += q
				count[keys[k]]++
			}
			i = j + 1
		}
	}
	c := Contribution{V: Version, Kernel: kernel, Device: device, Quantiles: map[string]float64{}, Problems: len(byProblem)}
	for k, s := range sum {
		c.Quantiles[k] = s / float64(count[k])
	}
	return c
}

func (c *Contribution) body() []byte {
	q, _ := json.Marshal(c.Quantiles) // map keys sorted: one body per content
	return signedBody("aggregate", c.Kernel, c.Device, c.Node, fmt.Sprint(c.Problems), c.At.UTC().Format(time.RFC3339Nano), c.Reporter, string(q))
}

// sign signs c by key as node.
func (c *Contribution) sign(key ed25519.PrivateKey, node string, at time.Time) {
	c.V, c.Node, c.At = Version, node, at.UTC()
	c.Reporter = certs.KeyID(key.Public().(ed25519.PublicKey))
	c.Signature = sign(key, c.body())
}

// AggKey is the KV key of node's contribution for kernel on device class
// dev.
func AggKey(kernel, dev, node string) string {
	return prefixAgg + part(dev) + "." + part(kernel) + "." + node
}

// CheckContribution decodes the contribution at kvKey and verifies its
// reporter's signature with a key of t.
func CheckContribution(t *Trust, kvKey string, data []byte) (Contribution, error) {
	var c Contribution
	if err := decodeStrict("contribution "+clip(kvKey), data, &c); err != nil {
		return c, err
	}
	switch {
	case c.V != Version:
		return c, fmt.Errorf("contribution %s: %w: version %d, want %d", clip(kvKey), ErrMalformed, c.V, Version)
	case !hexRE.MatchString(c.Node):
		return c, fmt.Errorf("contribution %s: %w: node %q is not a node id", clip(kvKey), ErrMalformed, clip(c.Node))
	case kvKey != AggKey(c.Kernel, c.Device, c.Node):
		return c, fmt.Errorf("contribution %s: %w: it is %s's of %s on %s", clip(kvKey), ErrTampered, c.Node, clip(c.Kernel), clip(c.Device))
	}
	for k, q := range c.Quantiles {
		if !(q >= 0 && q <= 1) {
			return c, fmt.Errorf("contribution %s: %w: quantile %v of %q outside 0..1", clip(kvKey), ErrMalformed, q, clip(k))
		}
	}
	pub, ok := t.Key(c.Reporter)
	if !ok {
		return c, fmt.Errorf("contribution %s: %w %s", clip(kvKey), ErrUntrusted, clip(c.Reporter))
	}
	if !verifySig(pub, c.body(), c.Signature) {
		return c, fmt.Errorf("contribution %s: %w: signature does not verify", clip(kvKey), ErrTampered)
	}
	return c, nil
}

// Ranked is one config in the aggregate: its rank quantile averaged over
// the Nodes that measured it.
type Ranked struct {
	Key      string
	Quantile float64
	Nodes    int
}

// Combine averages contributions (of one kernel and device class) per
// config; the result is sorted best first, ties by more nodes, then key.
func Combine(cs []Contribution) []Ranked {
	sum, n := map[string]float64{}, map[string]int{}
	for _, c := range cs {
		for k, q := range c.Quantiles {
			sum[k] += q
			n[k]++
		}
	}
	out := make([]Ranked, 0, len(sum))
	for k, s := range sum {
		out = append(out, Ranked{Key: k, Quantile: s / float64(n[k]), Nodes: n[k]})
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		switch {
		case a.Quantile != b.Quantile:
			if a.Quantile < b.Quantile {
				return -1
			}
			return 1
		case a.Nodes != b.Nodes:
			return b.Nodes - a.Nodes
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out
}
