package livehost

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/phptune/phptune/internal/base/noredirect"
	"github.com/phptune/phptune/internal/live/liveapply"
)

// URLCheck probes url now (with host, when set, as its Host header) and
// returns a step whose health check wants the same status again. The
// caller has checked that url is an http:// URL on loopback.
func URLCheck(ctx context.Context, url, host string) (liveapply.Step, error) {
	get := func(ctx context.Context) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		if host != "" {
			req.Host = host
		}
		resp, err := noredirect.Client(nil).Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	before, err := get(ctx)
	if err != nil {
		return liveapply.Step{}, fmt.Errorf("--check-url %s before the change: %v", url, err)
	}
	return liveapply.Step{Name: "check-url", Healthy: func(ctx context.Context) error {
		now, err := get(ctx)
		if err != nil {
			return fmt.Errorf("%s: %v", url, err)
		}
		if now != before {
			return fmt.Errorf("%s answered %d, %d before the change", url, now, before)
		}
		return nil
	}}, nil
}
