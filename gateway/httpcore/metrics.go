package httpcore

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Metrics holds the gateway's HTTP metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// inflight counts the requests being served: one atomic add each way
	// (a prometheus.Gauge adds with a compare-and-swap loop, which
	// connections on every core contend for).
	inflight atomic.Int64
	reg      *prometheus.Registry
	// children keeps the counter and histogram of each (route, method,
	// code) seen: looking them up in the vectors hashes the label values
	// on every request. Routes are the router's patterns, methods and codes
	// a small set, so it stays small.
	children sync.Map // childKey → *child
}

type childKey struct {
	route, method string
	code          int
}

type child struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func (m *Metrics) child(route, method string, code int) *child {
	k := childKey{route, method, code}
	if c, ok := m.children.Load(k); ok {
		return c.(*child)
	}
	c := &child{requests: m.requests.WithLabelValues(route, method, statusLabel(code)), duration: m.duration.WithLabelValues(route, method)}
	v, _ := m.children.LoadOrStore(k, c)
	return v.(*child)
}

// NewMetrics creates the HTTP metrics, the Go and process collectors and
// toxgate_build_info in a new registry.
func NewMetrics(version string) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toxgate_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
	}
	inflight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toxgate_http_requests_in_flight",
		Help: "HTTP requests being served.",
	}, func() float64 { return float64(m.inflight.Load()) })
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "toxgate_build_info",
		Help: "Build information of the running gateway (always 1).",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	reg.MustRegister(m.requests, m.duration, inflight, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where other parts of the gateway register their metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Middleware records each request's route, status and latency.
func (m *Metrics) Middleware() Middleware {
	return func(next fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			m.inflight.Add(1)
			defer func() {
				m.inflight.Add(-1)
				c := m.child(Route(ctx), methodLabel(ctx.Method()), ctx.Response.StatusCode())
				c.requests.Inc()
				c.duration.Observe(time.Since(ctx.Time()).Seconds())
			}()
			next(ctx)
		}
	}
}

// Handler serves /metrics in the Prometheus text format.
func (m *Metrics) Handler() fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
}

var statusLabels = func() [600]string {
	var s [600]string
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusLabel(code int) string {
	if code >= 0 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}

// methodLabel keeps the label set small: known methods by name, others as "other".
func methodLabel(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "HEAD":
		return "HEAD"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "OPTIONS":
		return "OPTIONS"
	}
	return "other"
}
