package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"time"
)

// loadFromRecords loads the catalog from the records file at path
// (readmodel_records.go) instead of reading every dataset from the store,
// when the file is usable. The organizations, groups and vocabularies are
// read from the store, the index from its snapshot (indexing again what
// changed since), and then the catalog catches up from the claims made
// since the file's last mark (catchUp; a full reload when they do not
// reach back that far). It reports false, with nothing changed, when the
// file is missing or unusable.
func (s *Service) loadFromRecords(ctx context.Context, path string) (bool, error) {
	start := time.Now()
	fresh := newReadModel()
	fresh.deferIndex = true
	if err := s.loadContext(ctx, fresh); err != nil {
		return false, err
	}
	// a process replacing a running one leaves it a core (Options.GentleLoad)
	workers := runtime.GOMAXPROCS(0)
	if s.opts.GentleLoad {
		workers = max(1, workers/2)
	}
	got, err := fresh.restoreRecords(path, s.storeID, workers)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("catalog records file not used; reading every dataset from the store", "path", path, "err", err)
		}
		return false, nil
	}
	read := time.Since(start)
	// The marker is read after the file: a running process (a hot
	// reload's old one) may have appended changes past a marker read
	// before. A file ahead of the store is of an older store.
	readAt := time.Now()
	m, err := s.c.readMarker(ctx)
	if err != nil {
		return false, err
	}
	if m.Seq < got.seq {
		s.log.Warn("catalog records file not used; reading every dataset from the store", "path", path,
			"err", fmt.Sprintf("records file at marker %d, ahead of the store's %d", got.seq, m.Seq))
		return false, nil
	}
	fresh.deferIndex = false
	s.indexLoaded(fresh, m.Seq)
	fresh.applied = got.seq
	s.st.replaceWith(fresh, got.seq, got.at)
	indexed := time.Since(start)
	// Catch up from the claims made since the file's last mark, whatever
	// the marker says: a write whose process died between its store write
	// and its marker raise is in the store and the claims but in no
	// marker, and a full load would have read it.
	if err := s.catchUp(ctx, m.Seq, readAt); err != nil {
		return true, err
	}
	applied, _ := s.st.appliedMarker()
	s.log.Info("catalog loaded from its records file", "path", path, "datasets", got.datasets, "frames", got.frames,
		"file_seq", got.seq, "seq", applied, "read", read, "indexed", indexed-read, "took", time.Since(start))
	return true, nil
}

// keepRecords writes the records file at path once the catalog is loaded
// and appends every change to it (every recordsFlushEvery), rewriting it
// when its journal outgrew its base or stopped, until ctx ends (then it
// appends what is pending and closes the file). It stops for good when
// another process (a newer one, after a hot reload) took the path over.
func (s *Service) keepRecords(ctx context.Context, path string) {
	removeStaleTemps(path, s.log)
	first := true
	defer func() {
		if first {
			close(s.recordsFirst)
		}
	}()
	for {
		start := time.Now()
		rf, err := s.st.startRecords(path, s.storeID)
		if first {
			first = false
			close(s.recordsFirst)
		}
		if err != nil {
			s.log.Warn("catalog records file not written", "path", path, "err", err)
			return
		}
		s.log.Info("catalog records file written", "path", path, "datasets", rf.datasets, "bytes", rf.base, "took", time.Since(start))
		if !s.appendRecords(ctx, rf) {
			return
		}
		if !rf.stillOurs() {
			s.log.Info("catalog records file taken over by another process; no longer written here", "path", path)
			return
		}
	}
}

// appendRecords appends the journal of rf until ctx ends (false) or the
// file needs rewriting (true). It closes rf.
func (s *Service) appendRecords(ctx context.Context, rf *recordsFile) bool {
	defer rf.close(s.st)
	t := time.NewTicker(recordsFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := rf.flush(s.st); err != nil {
				s.log.Warn("catalog records file: last changes not appended", "err", err)
			}
			return false
		case <-t.C:
		}
		if err := rf.flush(s.st); err != nil {
			if !errors.Is(err, errJournalBroken) {
				s.log.Warn("catalog records file", "err", err)
			}
			return true
		}
		if rf.needsRewrite() {
			return true
		}
	}
}

// Close stops the catalog's background writing of its records file,
// appending what is pending first, and waits for it. Actions still run.
func (s *Service) Close() {
	if s.stopRecords != nil {
		s.stopRecords()
		<-s.recordsDone
	}
}
