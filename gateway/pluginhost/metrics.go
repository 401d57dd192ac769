package pluginhost

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	calls    *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	up       *prometheus.GaugeVec
	restarts *prometheus.CounterVec
	reloads  *prometheus.CounterVec
	// loading is 1 while the serving process loads; loadSeconds is how
	// long the last process took from its handshake to loaded.
	loading     *prometheus.GaugeVec
	loadSeconds *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_plugin_calls_total",
			Help: "Action calls routed to plugins, by plugin, action and HTTP status."}, []string{"plugin", "action", "status"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toxgate_plugin_call_seconds",
			Help: "Duration of plugin action calls.", Buckets: prometheus.ExponentialBuckets(0.0002, 2, 16)}, []string{"plugin"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toxgate_plugin_up",
			Help: "1 when the plugin process is running and answering."}, []string{"plugin"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_plugin_crashes_total",
			Help: "Plugin processes found dead or not answering."}, []string{"plugin"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_plugin_reloads_total",
			Help: "Hot reloads by result (ok, failed)."}, []string{"plugin", "result"}),
		loading: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toxgate_plugin_loading",
			Help: "1 while the serving plugin process loads after its handshake (its actions answer 503)."}, []string{"plugin"}),
		loadSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toxgate_plugin_load_seconds",
			Help: "Seconds the last plugin process (started or reloaded) took from its handshake until it had loaded."}, []string{"plugin"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.calls, m.seconds, m.up, m.restarts, m.reloads, m.loading, m.loadSeconds} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}
