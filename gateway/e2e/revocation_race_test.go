package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// After api_token_revoke returns, no request on that gateway passes with
// the token, even when lookups of the token were in flight during the
// revoke. Many rounds: in each, clients hammer the external-authorization
// check with a fresh token while the sysadmin revokes it; every request
// sent after the revoke's answer arrived must be refused. The cache TTL is
// long so that a stale "valid" entry, once cached, would be seen.
func TestRevocationRaceWithRequestsInFlight(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_AUTH_TOKEN_CACHE_TTL=15ms"))
	adm := adminToken(t, g)
	provision(t, g, adm, "racer", "racer-password", true, "models")

	const (
		rounds  = 100
		clients = 6
		after   = 5 // requests each client sends after the revoke returned
	)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	deadline := time.Now().Add(3 * time.Minute)
	accepted := 0
	for round := 0; round < rounds && time.Now().Before(deadline); round++ {
		tok := tokenFor(t, g, adm, "racer", nil)
		var (
			mu        sync.Mutex
			revokedAt time.Time // zero until the revoke's answer arrived
			late      []string
			wg        sync.WaitGroup
		)
		start := make(chan struct{})
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				n := 0
				for n < after && time.Now().Before(deadline) {
					sent := time.Now()
					code, err := checkWith(client, g, tok)
					if err != nil {
						mu.Lock()
						late = append(late, "error: "+err.Error())
						mu.Unlock()
						return
					}
					mu.Lock()
					if !revokedAt.IsZero() && sent.After(revokedAt) {
						n++
						if code != http.StatusUnauthorized {
							late = append(late, fmt.Sprintf("status %d, sent %s after the revoke returned", code, sent.Sub(revokedAt)))
						}
					}
					if code == http.StatusOK {
						accepted++
					}
					mu.Unlock()
				}
			}()
		}
		close(start)
		code, out := ckan(t, g, "api_token_revoke", adm, map[string]any{"token": tok})
		if code != 200 {
			t.Fatalf("round %d: api_token_revoke: %d %v", round, code, out)
		}
		mu.Lock()
		revokedAt = time.Now()
		mu.Unlock()
		wg.Wait()
		if len(late) > 0 {
			t.Fatalf("round %d: %d requests after the revoke were not refused: %v", round, len(late), late)
		}
	}
	if accepted == 0 {
		t.Fatal("no request was ever accepted before a revoke: the test did not race anything")
	}
}

// checkWith asks the external-authorization endpoint whether tok may call
// a model.
func checkWith(c *http.Client, g *harness.Gateway, tok string) (int, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, g.URL+"/auth/check/hERG/evaluate", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
