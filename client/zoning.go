package client

import (
	"context"
	"net/http"

	"github.com/quasim/quasim/api"
)

// Zoning returns the precision map of a zoned pipeline's chain, tuned
// jointly against the chain's error budget (GET
// /v1/pipelines/{pipeline}/zoning); State says whether it is still being
// tuned.
func (c *Client) Zoning(ctx context.Context, pipeline string) (api.Zoning, error) {
	p, err := kernelPath("/v1/pipelines/", pipeline, "/zoning")
	if err != nil {
		return api.Zoning{}, err
	}
	return call[api.Zoning](ctx, c, http.MethodGet, p, nil, nil)
}

// Rezone makes quasimd tune a zoned pipeline's map again now (POST
// /v1/pipelines/{pipeline}/zoning); the answer is in State tuning, and
// Zoning reads the result once it is done.
func (c *Client) Rezone(ctx context.Context, pipeline string) (api.Zoning, error) {
	p, err := kernelPath("/v1/pipelines/", pipeline, "/zoning")
	if err != nil {
		return api.Zoning{}, err
	}
	return call[api.Zoning](ctx, c, http.MethodPost, p, nil, nil)
}
