package catalog

import (
	"context"
	"fmt"
	"time"
)

// sweepVersions removes what an interrupted dataset_version_create left:
// pending versions not touched for longer than grace (their tables and
// record; their files are the datasets' or the file sweep's), and
// snapshot tables that no version record names. Run by SweepFiles.
func (s *Service) sweepVersions(ctx context.Context, grace time.Duration) error {
	var snaps []string
	if s.ds != nil {
		// the tables first: a record is written before its tables, so
		// every table listed here of a live version has its record below
		var err error
		if snaps, err = s.ds.Snapshots(ctx); err != nil {
			return fmt.Errorf("versions: sweep: %w", err)
		}
	}
	_, tables, pending, err := s.vs.held(ctx)
	if err != nil {
		return fmt.Errorf("versions: sweep: %w", err)
	}
	cutoff := time.Now().Add(-grace)
	removed := 0
	for _, v := range pending {
		if v.State == VersionPending {
			take, err := s.abandonVersion(ctx, v.ID, cutoff)
			if err != nil {
				return fmt.Errorf("versions: sweep: %w", err)
			}
			if !take {
				continue
			}
		}
		s.dropVersionData(ctx, v, false)
		removed++
	}
	orphans := 0
	for _, name := range snaps {
		if tables[name] {
			continue
		}
		if err := s.ds.DropSnapshot(ctx, name); err != nil {
			return fmt.Errorf("versions: sweep: %w", err)
		}
		orphans++
	}
	if removed+orphans > 0 {
		s.log.Info("version sweep removed leftovers", "abandoned_versions", removed, "orphan_snapshots", orphans)
	}
	return nil
}

// abandonVersion takes pending version id for the sweep when it was not
// touched since cutoff and its maker has not marked it active: true when
// its tables and record are to be dropped. A version made meanwhile is
// never dropped: its maker and the sweeps settle its end with one claim
// (decideVersion).
func (s *Service) abandonVersion(ctx context.Context, id string, cutoff time.Time) (bool, error) {
	cur, err := s.vs.get(ctx, id)
	if err != nil || cur == nil {
		return false, err
	}
	if cur.State == versionAbandoned {
		return true, nil
	}
	if cur.State != VersionPending || !cur.Touched.Before(cutoff) {
		return false, nil
	}
	won, winner, at, err := s.decideVersion(ctx, id, versionAbandoned)
	switch {
	case err != nil:
		return false, err
	case won || winner == versionAbandoned: // this sweep's, or another's
	case time.Since(at) > claimStale:
		// its maker claimed it active and died before writing so
		// (its write is fenced well within claimStale)
	default:
		return false, nil // its maker is marking it active
	}
	if err := s.vs.abandon(ctx, id); err != nil {
		return false, err
	}
	return true, nil
}

// touchVersion records that pending version id's maker is still at work.
func (s *Service) touchVersion(ctx context.Context, id string) error {
	return s.vs.touch(ctx, id, now())
}

// heartbeat touches pending version id every quarter of the sweep's grace
// (every 15 s before the first sweep) until stop is called, so that a
// long table copy is not taken for an abandoned one.
func (s *Service) heartbeat(ctx context.Context, id string) (stop func()) {
	every := 15 * time.Second
	if g := time.Duration(s.sweepGrace.Load()); g > 0 {
		every = max(g/4, 10*time.Millisecond)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := s.touchVersion(ctx, id); err != nil {
					s.log.Warn("version: heartbeat", "version", id, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
