package filehttp

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"toxgate/catalog/filestore"
)

type metrics struct {
	uploads, downloads *prometheus.CounterVec
	upBytes, downBytes prometheus.Counter
	stored             prometheus.GaugeFunc
	inFlight           prometheus.Gauge
}

func newMetrics(store *filestore.Store) metrics {
	// The stored total is read from the store at most every 30 s.
	var mu sync.Mutex
	var last time.Time
	var total float64
	return metrics{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_file_uploads_total",
			Help: "Resource file uploads by outcome (stored, rejected, denied, busy, too_large, failed)."}, []string{"outcome"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "toxgate_file_uploads_in_progress",
			Help: "Resource uploads this gateway is receiving now."}),
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toxgate_file_downloads_total",
			Help: "Resource file downloads by outcome (full, partial, not_modified, not_found, unsatisfiable, failed)."}, []string{"outcome"}),
		upBytes:   prometheus.NewCounter(prometheus.CounterOpts{Name: "toxgate_file_upload_bytes_total", Help: "Bytes of stored uploads."}),
		downBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "toxgate_file_download_bytes_total", Help: "Bytes sent by downloads."}),
		stored: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toxgate_file_stored_bytes",
			Help: "Bytes of complete files in the file store (read every 30 s at most)."}, func() float64 {
			mu.Lock()
			defer mu.Unlock()
			if time.Since(last) > 30*time.Second {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if files, err := store.List(ctx); err == nil {
					total = 0
					for _, f := range files {
						if f.State == filestore.StateComplete {
							total += float64(f.Size)
						}
					}
					last = time.Now()
				}
			}
			return total
		}),
	}
}

func (m metrics) register(reg prometheus.Registerer) {
	if reg == nil {
		return
	}
	reg.MustRegister(m.uploads, m.downloads, m.upBytes, m.downBytes, m.stored, m.inFlight)
}
