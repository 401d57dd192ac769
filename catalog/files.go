package catalog

import (
	"context"
	"path"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/catalog/filestore"
)

func init() {
	registerInternal("resource_file", "The stored file of an uploaded resource, for the gateway's download route.", resourceFile)
	registerInternal("package_writable", "Whether the caller may add resources to a dataset, for the gateway's scoring jobs.", packageWritable)
}

// packageWritable answers the gateway's "may the caller edit dataset id
// (and so add a resource to it)?" (the scoring jobs before they start, the
// pages' edit buttons): {package_id, package_name}, else CKAN's 404 or
// 403 from package_update's auth function, which authTable gives it.
func packageWritable(_ context.Context, s *Service, r *Request) (any, error) {
	id, _ := str(r.Data["id"])
	if id == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	d, err := s.datasetByRef(id, "Package was not found.")
	if err != nil {
		return nil, err
	}
	return map[string]any{"package_id": d.ID, "package_name": d.Name}, nil
}

// resourceFile answers the gateway's download route: the file of resource
// id as {file_id, filename, package_id}, for those resource_show's auth
// function admits (authTable).
func resourceFile(_ context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		id, _ := str(r.Data["id"])
		return s.versionResourceFile(r.version, id)
	}
	return viewed2(s.st, func() (any, error) {
		d, i, err := s.st.resourceByID(r)
		if err != nil {
			return nil, err
		}
		res := &d.Resources[i]
		if res.FileID == "" {
			return nil, ckan.NotFound("Resource has no uploaded file.")
		}
		return map[string]any{"file_id": res.FileID, "filename": path.Base(res.URL), "package_id": d.ID, "package_name": d.Name}, nil
	})
}

// fileIDs lists the files that d's active resources hold.
func fileIDs(d *Dataset) map[string]bool {
	var out map[string]bool
	if d == nil {
		return nil
	}
	for i := range d.Resources {
		if id := d.Resources[i].FileID; id != "" && d.Resources[i].State != StateDeleted {
			if out == nil {
				out = map[string]bool{}
			}
			out[id] = true
		}
	}
	return out
}

// freeFiles deletes the files that before held and after no longer holds
// (a replaced upload, a cleared one, a deleted resource, a purged dataset).
// A failure is logged: the sweep removes what is left.
func (s *Service) freeFiles(ctx context.Context, before, after *Dataset) {
	keep := fileIDs(after)
	for id := range fileIDs(before) {
		if keep[id] {
			continue
		}
		if held, err := s.vs.holdsFile(ctx, id); err != nil || held {
			if err != nil {
				s.log.Warn("file not freed: its versions are unknown; the sweep will decide", "file_id", id, "err", err)
			}
			continue
		}
		if err := s.files.Delete(ctx, id); err != nil {
			s.log.Warn("file not freed; the sweep will remove it", "file_id", id, "err", err)
		}
	}
}

// Files is the catalog's file store.
func (s *Service) Files() *filestore.Store { return s.files }

// SweepFiles removes files that no dataset holds and uploads abandoned for
// longer than grace (see filestore.Store.Sweep).
func (s *Service) SweepFiles(ctx context.Context, grace time.Duration) (filestore.SweepStats, error) {
	if err := s.Sync(ctx); err != nil {
		return filestore.SweepStats{}, err
	}
	s.sweepGrace.Store(int64(grace))
	if err := s.sweepVersions(ctx, grace); err != nil {
		return filestore.SweepStats{}, err
	}
	held := map[string]bool{}
	s.st.view(func() {
		for _, d := range s.st.datasets {
			for id := range fileIDs(d) {
				held[id] = true
			}
		}
	})
	// A file completed after the map was built is younger than grace, so
	// it is not at risk.
	// a file no dataset holds may still be held by a version (asked of
	// the store at the last moment, so a version made meanwhile counts)
	return s.files.Sweep(ctx, func(id string) bool {
		if held[id] {
			return true
		}
		v, err := s.vs.holdsFile(ctx, id)
		return err != nil || v
	}, grace)
}

// RunFileSweeper sweeps at start and then every interval until ctx ends,
// logging what each sweep removed.
func (s *Service) RunFileSweeper(ctx context.Context, interval, grace time.Duration) {
	for {
		st, err := s.SweepFiles(ctx, grace)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("file sweep failed", "err", err)
		case st.Total() > 0:
			s.log.Info("file sweep removed leftovers", "abandoned_uploads", st.Pending, "unreferenced_files", st.Unreferenced, "stray_segments", st.Segments)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
