package filestore

import (
	"context"
	"time"
)

// SweepStats counts what a sweep removed.
type SweepStats struct {
	// Pending is the number of uploads abandoned before completion.
	Pending int
	// Unreferenced is the number of complete files no record points at.
	Unreferenced int
	// Segments is the number of files' bytes (in any backend) without
	// metadata.
	Segments int
}

// Total is the number of files and stray segments removed.
func (s SweepStats) Total() int { return s.Pending + s.Unreferenced + s.Segments }

// Sweep removes what crashes and lost races leave behind: pending files not
// touched for longer than grace (their writer is gone), complete files that
// referenced reports unused and that were completed longer than grace ago
// (their record was never written, or was replaced or deleted), and bytes
// in any backend of files that have no metadata. referenced must see every
// record written before the sweep started.
func (s *Store) Sweep(ctx context.Context, referenced func(id string) bool, grace time.Duration) (SweepStats, error) {
	var st SweepStats
	// Bytes first: a writer inserts a file's metadata before its first
	// byte, so every id listed here that has bytes of a live file has its
	// metadata in the list below.
	withBytes := map[string][]Backend{}
	for _, bk := range s.backends {
		ids, err := bk.IDs(ctx)
		if err != nil {
			return st, err
		}
		for _, id := range ids {
			withBytes[id] = append(withBytes[id], bk)
		}
	}
	files, err := s.List(ctx)
	if err != nil {
		return st, err
	}
	cutoff := time.Now().Add(-grace)
	known := make(map[string]bool, len(files))
	for _, f := range files {
		known[f.ID] = true
		if f.Touched.After(cutoff) {
			continue
		}
		switch {
		case f.State == StatePending:
			st.Pending++
		case !referenced(f.ID):
			st.Unreferenced++
		default:
			continue
		}
		if err := s.Delete(ctx, f.ID); err != nil {
			return st, err
		}
	}
	for id, bks := range withBytes {
		if known[id] {
			continue
		}
		// Bytes without metadata belong to a file whose deletion was cut
		// short.
		for _, bk := range bks {
			if err := bk.Delete(ctx, id); err != nil {
				return st, err
			}
			st.Segments++
		}
	}
	return st, nil
}
