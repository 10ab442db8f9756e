package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/quasim/quasim/api"
)

// Certs lists the daemon's certificates; a non-empty kernel keeps only that
// kernel's.
func (c *Client) Certs(ctx context.Context, kernel string) (api.Certs, error) {
	q := url.Values{}
	if kernel != "" {
		q.Set("kernel", kernel)
	}
	return call[api.Certs](ctx, c, http.MethodGet, "/v1/certs", q, nil)
}

// Cert returns certificate id exactly as the daemon serves it: the signed
// bytes, not re-encoded, so they verify offline with certs.VerifyBytes.
// revoked is the revocation reason from the Quasim-Revoked header, "" for a
// certificate in force; a revoked certificate whose header is empty reports
// "no reason given". An unknown id is api.ErrNotFound.
func (c *Client) Cert(ctx context.Context, id string) (body []byte, revoked string, err error) {
	p, err := certPath(id, "")
	if err != nil {
		return nil, "", err
	}
	resp, err := c.do(ctx, http.MethodGet, p, nil, nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err = readBody(resp)
	if err != nil {
		return nil, "", err
	}
	if vs, ok := resp.Header[http.CanonicalHeaderKey(api.HeaderRevoked)]; ok {
		revoked = "no reason given"
		if len(vs) > 0 && vs[0] != "" {
			revoked = vs[0]
		}
	}
	return body, revoked, nil
}

// Pubkey returns the public key the daemon signs certificates with.
func (c *Client) Pubkey(ctx context.Context) (api.Pubkey, error) {
	return call[api.Pubkey](ctx, c, http.MethodGet, "/v1/certs/pubkey", nil, nil)
}

// Revoke revokes certificate id for reason and says what the daemon serves
// for its job now. Only operators may revoke (api.ErrPermissionDenied).
func (c *Client) Revoke(ctx context.Context, id, reason string) (api.RevokeResponse, error) {
	p, err := certPath(id, "/revoke")
	if err != nil {
		return api.RevokeResponse{}, err
	}
	return call[api.RevokeResponse](ctx, c, http.MethodPost, p, nil, api.RevokeRequest{Reason: reason})
}

// certPath builds /v1/certs/ + escaped id + suffix. "pubkey" is not an id
// (GET /v1/certs/pubkey is the daemon's key), nor are "." and "..", which a
// server cleans out of the path.
func certPath(id, suffix string) (string, error) {
	switch id {
	case "":
		return "", fmt.Errorf("empty certificate id: %w", api.ErrInvalidArgument)
	case "pubkey", ".", "..":
		return "", fmt.Errorf("certificate id %q is reserved: %w", id, api.ErrInvalidArgument)
	}
	return "/v1/certs/" + url.PathEscape(id) + suffix, nil
}

// readBody returns resp's body as is, or the api.Error of a non-2xx
// response. It does not close the body.
func readBody(resp *http.Response) ([]byte, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorFrom(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w: %w", api.ErrUnavailable, err)
	}
	if len(b) > maxResponseBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	return b, nil
}
