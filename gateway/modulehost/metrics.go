package modulehost

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	loads    *prometheus.CounterVec
	modules  prometheus.Gauge
	rejected *prometheus.CounterVec
	parks    *prometheus.CounterVec

	cacheHits, cacheMisses *prometheus.CounterVec
	cacheEvictions         prometheus.Counter
	cacheBytes             prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_model_calls_total",
			Help: "Model calls by module and outcome code (ok or the error code).",
		}, []string{"module", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toxgate_model_call_duration_seconds",
			Help:    "Time spent in a model call, from validated input to output.",
			Buckets: []float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 30},
		}, []string{"module"}),
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_module_loads_total",
			Help: "Module load attempts by result (loaded, refused).",
		}, []string{"result"}),
		modules: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toxgate_modules_loaded",
			Help: "Modules currently serving.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_model_rejected_total",
			Help: "Model calls refused with 429 before running, by model and reason (queue_full, caller_queue_full, wait_timeout).",
		}, []string{"model", "reason"}),
		parks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_module_releases_total",
			Help: "Times a module dropped its compiled code and instances after going idle (see modules.idle_release).",
		}, []string{"module"}),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_model_cache_hits_total",
			Help: "Model answers (a batch: items) given from the response cache or from a duplicate in the same list, by module.",
		}, []string{"module"}),
		cacheMisses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toxgate_model_cache_misses_total",
			Help: "Model answers (a batch: distinct items) computed by the module because the response cache did not hold them, by module.",
		}, []string{"module"}),
		cacheEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toxgate_model_cache_evictions_total",
			Help: "Answers dropped from the response cache to keep it within modules.response_cache_bytes.",
		}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toxgate_model_cache_bytes",
			Help: "Bytes held by the response cache (answers and a fixed overhead per entry).",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.loads, m.modules, m.rejected, m.parks, m.cacheHits, m.cacheMisses, m.cacheEvictions, m.cacheBytes} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("modulehost: registering metrics: %w", err)
			}
		}
	}
	return m, nil
}
