package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// probeUsage describes `toxgate probe`.
const probeUsage = `usage: toxgate probe [-timeout 5s] [URL]

GETs URL (default http://127.0.0.1:8080/readyz) and exits 0 when the answer
is 2xx, 1 otherwise: the health check of a container image without a shell
(compose's healthcheck, a Kubernetes exec probe).
`

// probeMaxBody is how much of an answer probe reads (and prints on failure).
const probeMaxBody = 4096

// probeCommand runs `toxgate probe`.
func probeCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toxgate probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 5*time.Second, "time limit of the request, answer included")
	fs.Usage = func() { fmt.Fprint(stderr, probeUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	target := "http://127.0.0.1:8080/readyz"
	switch fs.NArg() {
	case 0:
	case 1:
		target = fs.Arg(0)
	default:
		fs.Usage()
		return 2
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "toxgate probe: %q is not an http(s) URL\n", target)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		fmt.Fprintf(stderr, "toxgate probe: %v\n", err)
		return 2
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "toxgate probe: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, probeMaxBody))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "toxgate probe: %s: %s\n%s\n", target, resp.Status, body)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", target, resp.Status)
	return 0
}
