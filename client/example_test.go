package client_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/quasim/quasim/api"
	"github.com/quasim/quasim/client"
)

// A kernel runtime asks for its config and falls back to its defaults when
// quasimd is not running or has nothing for the kernel.
func ExampleClient_Config() {
	c := &client.Client{Socket: "/nonexistent/quasimd.sock"}
	cfg, err := c.Config(context.Background(), "sgemm", "1024,1024,1024", "")
	switch {
	case errors.Is(err, api.ErrUnavailable) || errors.Is(err, api.ErrNotFound):
		fmt.Println("no tuned config: using the defaults")
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println("tuned config", cfg.Key, "matched", cfg.Match)
	}
	// Output: no tuned config: using the defaults
}
