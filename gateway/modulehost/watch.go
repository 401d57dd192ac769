package modulehost

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce groups the burst of events a file copy produces into one Sync.
const watchDebounce = 100 * time.Millisecond

// watch syncs the registry with ModulesDir whenever a *.wasm file in it
// changes. It returns a function that stops watching.
func (h *Host) watch() (func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("modulehost: watcher: %w", err)
	}
	if err := w.Add(h.cfg.ModulesDir); err != nil {
		w.Close()
		return nil, fmt.Errorf("modulehost: watching %s: %w", h.cfg.ModulesDir, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !strings.HasSuffix(ev.Name, ".wasm") || ev.Op == fsnotify.Chmod {
					continue
				}
				h.log.Debug("module file event", "file", filepath.Base(ev.Name), "op", ev.Op.String())
				if timer == nil {
					timer = time.NewTimer(watchDebounce)
				} else {
					timer.Reset(watchDebounce)
				}
				fire = timer.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				h.log.Warn("module watcher", "error", err)
			case <-fire:
				fire = nil
				if err := h.Sync(ctx); err != nil {
					h.log.Error("syncing modules", "error", err)
				}
			}
		}
	}()
	return func() { cancel(); w.Close(); <-done }, nil
}
