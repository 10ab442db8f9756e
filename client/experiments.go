package client

import (
	"context"
	"net/http"

	"github.com/quasim/quasim/api"
)

// Experiment runs a perturbation experiment on a pipeline quasimd runs
// itself (POST /v1/causal/{pipeline}/experiment) and returns its report;
// it takes seconds to minutes, as long as ctx allows.
func (c *Client) Experiment(ctx context.Context, pipeline string, req api.ExperimentRequest) (api.Experiment, error) {
	p, err := kernelPath("/v1/causal/", pipeline, "/experiment")
	if err != nil {
		return api.Experiment{}, err
	}
	return call[api.Experiment](ctx, c, http.MethodPost, p, nil, req)
}

// Experiments lists a pipeline's stored experiments, newest first.
func (c *Client) Experiments(ctx context.Context, pipeline string) (api.Experiments, error) {
	p, err := kernelPath("/v1/causal/", pipeline, "/experiments")
	if err != nil {
		return api.Experiments{}, err
	}
	return call[api.Experiments](ctx, c, http.MethodGet, p, nil, nil)
}
