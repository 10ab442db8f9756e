package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// View is what a node knows of its fleet's KV bucket: the verified offers
// by job, the verified revocations and failure reports. Records that do
// not verify are left out of it. It does no I/O and is not safe for
// concurrent use.
type View struct {
	trust    *Trust
	offers   map[JobID]map[string]Verified // by job, then KV key
	byKey    map[string]JobID              // KV key -> job of its offer
	revoked  map[string]Revocation         // by certificate id
	failures map[string][]Failure          // by certificate id
	contribs map[string]Contribution       // by KV key
	Rejected Rejections
	// Held are offers, by KV key, that are not live for now: a client's
	// restored offers while it waits for the bucket to replay them.
	Held map[string]bool
}

// Rejections counts the records a View left out, by why.
type Rejections struct {
	Untrusted, Tampered, Malformed, NotPassed int
}

// NewView is an empty view that trusts t.
func NewView(t *Trust) *View {
	return &View{trust: t, offers: map[JobID]map[string]Verified{}, byKey: map[string]JobID{},
		revoked: map[string]Revocation{}, failures: map[string][]Failure{}, contribs: map[string]Contribution{}}
}

// Apply takes the KV record at key (deleted: a delete or purge marker) into
// the view. It returns the job whose offers changed (ok false when none
// did), or why the record was left out. A record that does not verify
// changes nothing: it neither adds an offer nor removes one.
func (v *View) Apply(key string, data []byte, deleted bool) (job JobID, ok bool, err error) {
	switch {
	case strings.HasPrefix(key, prefixCert):
		if deleted {
			job, ok = v.byKey[key]
			if ok {
				delete(v.offers[job], key)
				delete(v.byKey, key)
			}
			return job, ok, nil
		}
		o, err := CheckOffer(v.trust, key, data)
		if err != nil {
			v.count(err)
			return JobID{}, false, err
		}
		if v.offers[o.Job] == nil {
			v.offers[o.Job] = map[string]Verified{}
		}
		v.offers[o.Job][key] = o
		v.byKey[key] = o.Job
		return o.Job, true, nil
	case strings.HasPrefix(key, prefixRevoke):
		if deleted {
			return JobID{}, false, nil // a revocation stands
		}
		r, err := CheckRevocation(v.trust, key, data)
		if err != nil {
			v.count(err)
			return JobID{}, false, err
		}
		v.revoked[r.Cert] = r
		for k, job := range v.byKey {
			if o := v.offers[job][k]; o.Cert.ID == r.Cert {
				return job, true, nil
			}
		}
		return JobID{}, false, nil
	case strings.HasPrefix(key, prefixFail):
		if deleted {
			return JobID{}, false, nil
		}
		f, err := CheckFailure(v.trust, key, data)
		if err != nil {
			v.count(err)
			return JobID{}, false, err
		}
		for _, g := range v.failures[f.Cert] {
			if g.Node == f.Node {
				return JobID{}, false, nil
			}
		}
		v.failures[f.Cert] = append(v.failures[f.Cert], f)
		return JobID{}, false, nil
	case strings.HasPrefix(key, prefixAgg):
		if deleted {
			delete(v.contribs, key)
			return JobID{}, false, nil
		}
		c, err := CheckContribution(v.trust, key, data)
		if err != nil {
			v.count(err)
			return JobID{}, false, err
		}
		v.contribs[key] = c
		return JobID{}, false, nil
	case key == keySalt:
		return JobID{}, false, nil
	}
	err = fmt.Errorf("fleet key %q: %w: unknown prefix", clip(key), ErrMalformed)
	v.count(err)
	return JobID{}, false, err
}

func (v *View) count(err error) {
	switch {
	case errors.Is(err, ErrUntrusted):
		v.Rejected.Untrusted++
	case errors.Is(err, ErrTampered):
		v.Rejected.Tampered++
	case errors.Is(err, ErrNotPassed):
		v.Rejected.NotPassed++
	default:
		v.Rejected.Malformed++
	}
}

// Revoked is the revocation of certificate id by its own issuer, if any.
func (v *View) Revoked(id, issuer string) (Revocation, bool) {
	r, ok := v.revoked[id]
	return r, ok && r.Issuer == issuer
}

// Failures are the verified reports that certificate id failed on a node.
func (v *View) Failures(id string) []Failure { return v.failures[id] }

// Nodes is the number of distinct nodes whose verified offers or failure
// reports are held, node (this one) left out.
func (v *View) Nodes(node string) int {
	seen := map[string]bool{}
	for _, offers := range v.offers {
		for _, o := range offers {
			seen[o.Node] = true
		}
	}
	for _, fs := range v.failures {
		for _, f := range fs {
			seen[f.Node] = true
		}
	}
	delete(seen, node)
	return len(seen)
}

// Aggregate combines the verified contributions for kernel on device
// class dev (Combine); nodes is how many contributed.
func (v *View) Aggregate(kernel, dev string) (ranked []Ranked, nodes int) {
	var cs []Contribution
	for _, c := range v.contribs {
		if c.Kernel == kernel && c.Device == dev {
			cs = append(cs, c)
		}
	}
	return Combine(cs), len(cs)
}

// OfferOf is the verified offer of certificate id, revoked or not.
func (v *View) OfferOf(id string) (Verified, bool) {
	for _, offers := range v.offers {
		for _, o := range offers {
			if o.Cert.ID == id {
				return o, true
			}
		}
	}
	return Verified{}, false
}

// LiveAt are the best live offer of every job of kernel spec version
// specHash on device class dev, whatever its problem.
func (v *View) LiveAt(kernel, specHash, dev string) []Verified {
	var out []Verified
	for job := range v.offers {
		if job.Kernel == kernel && job.SpecHash == specHash && job.Device == dev {
			if o, ok := v.Best(job); ok {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b Verified) int { return strings.Compare(a.Job.Problem, b.Job.Problem) })
	return out
}

// Offers is the number of verified offers held.
func (v *View) Offers() int { return len(v.byKey) }

// Live are job's offers whose certificates their issuers have not
// revoked, best first: the lowest median latency, then the latest issued,
// then the lowest id.
func (v *View) Live(job JobID) []Verified {
	var out []Verified
	for k, o := range v.offers[job] {
		if v.Held[k] {
			continue
		}
		if _, revoked := v.Revoked(o.Cert.ID, o.Cert.Issuer); !revoked {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Verified) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	return out
}

// Best is job's best live offer, if any.
func (v *View) Best(job JobID) (Verified, bool) {
	live := v.Live(job)
	if len(live) == 0 {
		return Verified{}, false
	}
	return live[0], true
}

func better(a, b Verified) bool {
	if a.Cert.Latency.MedianMS != b.Cert.Latency.MedianMS {
		return a.Cert.Latency.MedianMS < b.Cert.Latency.MedianMS
	}
	if !a.Cert.IssuedAt.Equal(b.Cert.IssuedAt) {
		return a.Cert.IssuedAt.After(b.Cert.IssuedAt)
	}
	return a.Cert.ID < b.Cert.ID
}
