package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
	"github.com/quasim/quasim/runtime"
)

// A lookup of a kernel in a zoned pipeline carries its stage of the
// pipeline's jointly tuned precision map, as the daemon serves it.
func TestLookupCarriesZones(t *testing.T) {
	sock, _ := startDaemonFiles(t, map[string]string{
		"conv2d.yaml": "name: conv2d\nevaluator: builtin:conv2d\nproblems: [\"40,44,5\"]\nschedule: \"@every 1h\"\nbudget: {evals: 4}\n",
		"infer.yaml":  "pipeline: infer\nkernels: [conv2d, reduce]\nzoning: {chain: [conv2d, reduce], error_budget: {rel: 1e-3}, inputs: positive}\n",
	})
	ctx := context.Background()
	c := &client.Client{Socket: sock}
	deadline := time.Now().Add(60 * time.Second)
	var z api.Zoning
	for {
		var err error
		z, err = c.Zoning(ctx, "infer")
		if err == nil && z.State == api.ZoningDone && z.Map != nil {
			break
		}
		if time.Now().After(deadline) || z.State == api.ZoningFailed {
			t.Fatalf("zoning %+v %v", z, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rt := runtime.New(runtime.Options{Socket: sock})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res := rt.Lookup(ctx, "conv2d", []int{40, 44, 5}, defaults)
		z, _ = c.Zoning(ctx, "infer")
		if len(res.Zones) == 1 && z.Map != nil && res.Zones[0].Pipeline == "infer" && res.Zones[0].Key == z.Map.Stages[0].Key &&
			res.Zones[0].Precision["input"] == z.Map.Stages[0].Precision["input"] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Lookup zones %+v, zoning map %+v", res.Zones, z.Map)
		}
	}
}
