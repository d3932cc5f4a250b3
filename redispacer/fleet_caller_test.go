package redispacer_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
)

// fleetCaller: a PROTOTYPE of the loop's pacing, until the loop paces (then a remedy.Client).
func fleetCaller(t *testing.T, cfg fleetChild, p remedy.Pacer) func(ctx context.Context) error {
	url := cfg.URL
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * cfg.Callers
	hc := &http.Client{Transport: stampSent{tr}}
	warm(t, hc, url, cfg.Callers)
	return func(ctx context.Context) error {
		for attempt := 0; attempt < 50; attempt++ {
			if u, err := p.Until(ctx, url); err == nil && time.Until(u) > 0 {
				time.Sleep(time.Until(u))
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"/v1/work", nil)
			req.Header.Set("Authorization", fleetKey)
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 429 {
				return nil
			}
			ms, _ := strconv.Atoi(resp.Header.Get("Retry-After-Ms"))
			p.Hold(ctx, url, time.Now().Add(time.Duration(ms)*time.Millisecond))
		}
		return fmt.Errorf("too many attempts")
	}
}
