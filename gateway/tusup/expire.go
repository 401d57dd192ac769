package tusup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	tusd "github.com/tus/tusd/v2/pkg/handler"
)

// Run removes expired uploads every CleanInterval (and once at once) until
// ctx ends; an upload expires Expiry after its creation, finished or not.
func (h *Handler) Run(ctx context.Context) {
	every := h.cfg.CleanInterval
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		h.Clean(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Clean removes the uploads expired at now, and spooled chunks a crash
// left behind; it returns how many uploads it removed.
func (h *Handler) Clean(ctx context.Context, now time.Time) int {
	n := 0
	for _, id := range h.idx.expired(now, h.cfg.Expiry) {
		if err := h.remove(ctx, id); err != nil {
			h.log.Warn("expired upload not removed", "id", id, "err", err)
			continue
		}
		n++
	}
	spooled, _ := filepath.Glob(filepath.Join(h.cfg.Dir, ".spool", "chunk-*"))
	for _, f := range spooled {
		if st, err := os.Stat(f); err == nil && now.Sub(st.ModTime()) > h.cfg.Expiry {
			_ = os.Remove(f)
		}
	}
	return n
}

// remove deletes an upload's bytes and record and forgets it.
func (h *Handler) remove(ctx context.Context, id string) error {
	u, err := h.store.GetUpload(ctx, id)
	if err != nil {
		if errors.Is(err, tusd.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			h.idx.remove(id)
			return nil
		}
		return err
	}
	if err := h.store.AsTerminatableUpload(u).Terminate(ctx); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	h.idx.remove(id)
	return nil
}
