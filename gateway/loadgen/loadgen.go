// Package loadgen is a closed-loop HTTP load generator for loopback
// benchmarks: N connections, each sending its next request when the previous
// answer arrives, for a fixed duration or request count, whichever ends
// first. It refuses targets that are not loopback addresses.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Target is one kind of request to send.
type Target struct {
	Method string
	URL    string
	Header map[string]string
	Body   []byte
	// Bodies, when set, are sent in turn instead of Body (e.g. varied inputs).
	Bodies [][]byte
	// URLs, when set, are requested in turn instead of URL.
	URLs []string
	// Want is the expected status code (default 200); others count as errors.
	Want int
}

// Options bound a run.
type Options struct {
	Conns       int           // concurrent connections (default 64)
	Duration    time.Duration // how long to run (default 5s)
	MaxRequests int           // stop after this many requests (0: no cap)
	Warmup      time.Duration // time spent before measuring (default 500ms)
}

// Result summarises a run.
type Result struct {
	Requests int
	Errors   int
	Elapsed  time.Duration
	RPS      float64
	P50, P90 time.Duration
	P99, Max time.Duration
	FirstErr string
}

func (r Result) String() string {
	return fmt.Sprintf("%9.0f req/s  p50 %8s  p99 %8s  (%d requests, %d errors)",
		r.RPS, r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Requests, r.Errors)
}

// Run sends t's requests under opts and measures throughput and latency.
func Run(ctx context.Context, t Target, opts Options) (Result, error) {
	if opts.Conns <= 0 {
		opts.Conns = 64
	}
	if opts.Duration <= 0 {
		opts.Duration = 5 * time.Second
	}
	if opts.Warmup == 0 {
		opts.Warmup = 500 * time.Millisecond
	}
	if t.Method == "" {
		t.Method = fasthttp.MethodGet
	}
	if t.Want == 0 {
		t.Want = fasthttp.StatusOK
	}
	urls := t.URLs
	if len(urls) == 0 {
		urls = []string{t.URL}
	}
	u, err := url.Parse(urls[0])
	if err != nil {
		return Result{}, fmt.Errorf("loadgen: %w", err)
	}
	if err := checkLoopback(u.Hostname()); err != nil {
		return Result{}, err
	}
	client := &fasthttp.HostClient{
		Addr:                u.Host,
		MaxConns:            opts.Conns,
		MaxIdleConnDuration: time.Minute,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        30 * time.Second,
	}
	defer client.CloseIdleConnections()

	if opts.Warmup > 0 {
		wctx, cancel := context.WithTimeout(ctx, opts.Warmup)
		runWorkers(wctx, client, t, urls, opts.Conns, 0, nil)
		cancel()
	}
	rctx, cancel := context.WithTimeout(ctx, opts.Duration)
	defer cancel()
	var rec recorder
	start := time.Now()
	runWorkers(rctx, client, t, urls, opts.Conns, opts.MaxRequests, &rec)
	elapsed := time.Since(start)

	res := Result{Requests: len(rec.lat), Errors: rec.errors, Elapsed: elapsed, FirstErr: rec.firstErr}
	if res.Requests == 0 {
		return res, fmt.Errorf("loadgen: no request completed (%s)", rec.firstErr)
	}
	slices.Sort(rec.lat)
	pct := func(p float64) time.Duration { return rec.lat[min(len(rec.lat)-1, int(p*float64(len(rec.lat))))] }
	res.RPS = float64(res.Requests) / elapsed.Seconds()
	res.P50, res.P90, res.P99, res.Max = pct(0.50), pct(0.90), pct(0.99), rec.lat[len(rec.lat)-1]
	return res, nil
}

type recorder struct {
	mu       sync.Mutex
	lat      []time.Duration
	errors   int
	firstErr string
}

func runWorkers(ctx context.Context, client *fasthttp.HostClient, t Target, urls []string, conns, maxReq int, rec *recorder) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			lat := make([]time.Duration, 0, 4096)
			errs, firstErr := 0, ""
			for i := w; ctx.Err() == nil; i += conns {
				if maxReq > 0 {
					mu.Lock()
					if sent >= maxReq {
						mu.Unlock()
						break
					}
					sent++
					mu.Unlock()
				}
				req.Reset()
				req.Header.SetMethod(t.Method)
				req.SetRequestURI(urls[i%len(urls)])
				for k, v := range t.Header {
					req.Header.Set(k, v)
				}
				switch {
				case len(t.Bodies) > 0:
					req.SetBodyRaw(t.Bodies[i%len(t.Bodies)])
				case t.Body != nil:
					req.SetBodyRaw(t.Body)
				}
				start := time.Now()
				err := client.Do(req, resp)
				d := time.Since(start)
				if ctx.Err() != nil && err != nil {
					break
				}
				lat = append(lat, d)
				if err != nil || resp.StatusCode() != t.Want {
					errs++
					if firstErr == "" {
						if err != nil {
							firstErr = err.Error()
						} else {
							firstErr = fmt.Sprintf("status %d: %.200s", resp.StatusCode(), resp.Body())
						}
					}
				}
			}
			if rec != nil {
				rec.mu.Lock()
				rec.lat = append(rec.lat, lat...)
				rec.errors += errs
				if rec.firstErr == "" {
					rec.firstErr = firstErr
				}
				rec.mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
}

// checkLoopback refuses anything but loopback targets.
func checkLoopback(host string) error {
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return errors.New("loadgen: only loopback targets are allowed, got " + host)
	}
	return nil
}
