package pluginhost

import (
	"context"
	"os"
	"time"
)

// binStat identifies a version of a binary on disk.
type binStat struct {
	size    int64
	modTime time.Time
}

func statBinary(path string) (binStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return binStat{}, err
	}
	return binStat{size: fi.Size(), modTime: fi.ModTime()}, nil
}

// watch polls the plugin binaries and reloads a plugin whose binary changed
// and then stayed the same for one more interval (so a copy in progress is
// not started).
func (h *Host) watch() {
	defer h.wg.Done()
	tick := time.NewTicker(h.cfg.WatchInterval)
	defer tick.Stop()
	pending := map[*managed]binStat{}
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
		}
		for _, m := range h.plugins {
			st, err := statBinary(m.cfg.Path)
			if err != nil {
				continue
			}
			m.mu.Lock()
			known := m.binStat
			m.mu.Unlock()
			if st == known {
				delete(pending, m)
				continue
			}
			if prev, ok := pending[m]; !ok || prev != st {
				pending[m] = st
				continue
			}
			delete(pending, m)
			m.log.Info("plugin binary changed; reloading", "path", m.cfg.Path)
			ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout+h.cfg.LoadTimeout+h.cfg.CallTimeout)
			_ = m.reload(ctx)
			cancel()
		}
	}
}
