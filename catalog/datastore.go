package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// LoaderOptions configure automatic loading into the DataStore.
type LoaderOptions struct {
	// Formats are the resource formats loaded automatically (e.g. CSV,
	// TSV, XLSX); empty turns automatic loading off.
	Formats []string
	// Config is the loader's configuration; its Loaded hook is set by the
	// catalog.
	Config datastore.LoaderConfig
}

func init() {
	registerDS("datastore_create", false, "Create a DataStore table for a resource (or add fields) and insert records.", dsCreate)
	registerDS("datastore_upsert", false, "Insert, upsert or update records of a DataStore table.", dsUpsert)
	registerDS("datastore_delete", false, "Delete rows of a DataStore table (filters) or the whole table.", dsDelete)
	registerDS("datastore_records_delete", false, "Delete the rows of a DataStore table that match filters.", dsRecordsDelete)
	registerDS("datastore_info", true, "Fields and row count of a DataStore table.", dsInfo)
	registerDS("datastore_search", true, "Search a DataStore table: filters, q, sort, fields, paging.", dsSearch)
	registerDS("datastore_search_sql", true, "Run one read-only SELECT on DataStore tables.", dsSearchSQL)
	registerDS("xloader_submit", false, "Queue a (re)load of a resource's CSV, TSV or XLSX file into the DataStore.", dsSubmit)
	registerDS("xloader_status", true, "State, progress and log of a resource's last DataStore load.", dsStatus)
}

func registerDS(name string, get bool, desc string, run handler) {
	actions[name] = actionDef{Action: Action{Name: name, GET: get, Description: desc}, run: run, datastore: true}
}

// startDataStore starts the loader when there is a DataStore.
func (s *Service) startDataStore() {
	if s.ds == nil {
		return
	}
	cfg := s.opts.Loader.Config
	if cfg.OpenUpload == nil && s.files != nil {
		cfg.OpenUpload = s.openUpload
	}
	cfg.Loaded = func(ctx context.Context, id string) {
		defer s.chem.mark(id)
		if err := s.Sync(ctx); err != nil {
			s.log.Error("datastore: sync before marking a resource active", "err", err)
		}
		// a loaded table counts toward the quotas of the user whose write
		// queued it (else its dataset's creator); its rows are counted
		// outside the catalog's write lock
		var d *Dataset
		var owner string
		s.st.view(func() {
			d, _ = s.st.findResource(id)
			owner = ""
			if d != nil {
				owner = d.CreatorUserID
			}
		})
		if d != nil {
			if err := s.ds.Adopt(ctx, id, owner); err != nil {
				s.log.Error("datastore: record the owner of a loaded table", "resource_id", id, "err", err)
			}
		}
		err := s.catalogWrite(ctx, func() error {
			if d, _ := s.st.lookupResource(id); d == nil {
				// the resource was deleted while its file loaded
				s.afterResourceDelete(ctx, id)
				return nil
			}
			return s.setDatastoreActive(ctx, id, true)
		})
		if err != nil {
			s.log.Error("datastore: mark resource active", "resource_id", id, "err", err)
		}
	}
	s.loader = s.ds.StartLoader(cfg)
}

// openUpload opens an uploaded resource's file in the FileStore.
func (s *Service) openUpload(ctx context.Context, job datastore.Job) (io.ReadCloser, error) {
	if job.FileID == "" {
		return nil, fmt.Errorf("the resource has no uploaded file")
	}
	info, err := s.files.Stat(ctx, job.FileID)
	if err != nil {
		return nil, fmt.Errorf("uploaded file %s: %w", job.FileID, err)
	}
	return s.files.Open(ctx, info, 0, -1)
}

// catalogWrite runs f, a change of the catalog's own records (a resource,
// its datastore_active flag), the way write actions run: after a sync,
// through the write path (its per-record locks and claims).
func (s *Service) catalogWrite(ctx context.Context, f func() error) error {
	if err := s.Sync(ctx); err != nil {
		return fmt.Errorf("catalog: sync: %w", err)
	}
	return f()
}

// writer is the DataStore's view of who writes.
func writer(c Caller) datastore.Writer {
	return datastore.Writer{UserID: c.UserID, Sysadmin: c.Sysadmin}
}

// dsTarget finds the resource a DataStore action names. Who may act on it
// was decided before the action ran, by the action's auth function
// (auth_datastore.go); the resource may have been deleted since (404).
func (s *Service) dsTarget(id string) (*Resource, error) {
	if id == "" {
		return nil, ckan.FieldError("resource_id", ckan.MsgMissing)
	}
	d, i := s.st.lookupResource(id)
	if d == nil {
		return nil, ckan.NotFound(fmt.Sprintf("Resource \"%s\" was not found.", id))
	}
	return &d.Resources[i], nil
}

// setDatastoreActive records on the resource whether it has a table.
func (s *Service) setDatastoreActive(ctx context.Context, id string, active bool) error {
	var d *Dataset
	var same bool
	s.st.view(func() {
		var i int
		d, i = s.st.findResource(id)
		same = d != nil && d.Resources[i].Extras["datastore_active"] == active
	})
	if d == nil || same {
		return nil
	}
	_, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		for j := range n.Resources {
			if n.Resources[j].ID == id {
				if n.Resources[j].Extras == nil {
					n.Resources[j].Extras = map[string]any{}
				}
				n.Resources[j].Extras["datastore_active"] = active
			}
		}
		return n, nil
	})
	return err
}

func dsCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if rd, ok := r.Data["resource"].(map[string]any); ok && id == "" {
		var res any
		err := s.catalogWrite(ctx, func() (err error) {
			res, err = resourceCreate(ctx, s, &Request{Action: "resource_create", Caller: r.Caller, Data: rd, SiteURL: r.SiteURL})
			return err
		})
		if err != nil {
			if ce, ok := err.(*ckan.Error); ok && ce.Fields != nil {
				return nil, ckan.Validation(map[string]any{"resource": ce.Fields})
			}
			return nil, err
		}
		id, _ = res.(map[string]any)["id"].(string)
	}
	if id == "" {
		return nil, ckan.FieldError("resource_id", ckan.MsgMissing)
	}
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	out, err := s.ds.Create(ctx, id, r.Data, writer(r.Caller))
	if err != nil {
		return nil, err
	}
	s.chem.mark(id)
	return out, s.catalogWrite(ctx, func() error { return s.setDatastoreActive(ctx, id, true) })
}

func dsUpsert(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	out, err := s.ds.Upsert(ctx, id, r.Data, writer(r.Caller))
	if err == nil {
		s.chem.mark(id)
	}
	return out, err
}

func dsDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	out, dropped, err := s.ds.Delete(ctx, id, r.Data)
	if err != nil {
		return nil, err
	}
	s.chem.mark(id)
	if dropped {
		return out, s.catalogWrite(ctx, func() error { return s.setDatastoreActive(ctx, id, false) })
	}
	return out, nil
}

func dsRecordsDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	out, err := s.ds.RecordsDelete(ctx, id, r.Data)
	if err == nil {
		s.chem.mark(id)
	}
	return out, err
}

func dsInfo(ctx context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		return s.versionDSSearch(ctx, r.version, r.Data, true)
	}
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	return s.ds.Info(ctx, id)
}

func dsSearch(ctx context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		return s.versionDSSearch(ctx, r.version, r.Data, false)
	}
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	return s.ds.Search(ctx, id, r.Data)
}

func dsSearchSQL(ctx context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		return s.versionDSSearchSQL(ctx, r)
	}
	return s.ds.SearchSQL(ctx, r.Data, r.Caller.UserID, func(id string) error {
		return s.authDatastoreSQLTable(r.Caller, id)
	})
}

func dsSubmit(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	res, err := s.dsTarget(id)
	if err != nil {
		return nil, err
	}
	if !r.Caller.Sysadmin {
		if err := s.ds.CheckLoadQuota(ctx, r.Caller.UserID, id); err != nil {
			return nil, err
		}
	}
	if err := s.loader.Submit(ctx, loadJob(ctx, res)); err != nil {
		return nil, err
	}
	return true, nil
}

func dsStatus(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	return s.loader.Status(ctx, id)
}

// loadJob is the load of r, submitted by the caller of ctx's action; a
// sysadmin's and the gateway's own loads (an import, the models' datasets)
// are not held to the per-user queue cap.
func loadJob(ctx context.Context, r *Resource) datastore.Job {
	a := actorFrom(ctx)
	j := datastore.Job{ResourceID: r.ID, URL: r.URL, Format: r.Format, FileID: r.FileID, Submitter: a.userID,
		Uncapped: a.sysadmin || a.userID == siteUser}
	if r.URLType != nil {
		j.URLType = *r.URLType
	}
	return j
}

// loadable reports whether r is a file the loader takes: an upload or an
// http(s) link, in one of the configured formats.
func (s *Service) loadable(r *Resource) bool {
	if s.loader == nil || len(s.opts.Loader.Formats) == 0 || r.State == StateDeleted {
		return false
	}
	upload := r.URLType != nil && *r.URLType == "upload"
	if !upload && !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
		return false
	}
	if r.URLType != nil && *r.URLType == "datastore" {
		return false
	}
	format := strings.ToUpper(strings.TrimSpace(r.Format))
	if format == "" {
		u := r.URL
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		// a compressed file goes by the format inside: x.csv.gz is CSV
		u = strings.TrimSuffix(strings.TrimSuffix(u, ".gz"), ".GZ")
		format = strings.ToUpper(strings.TrimPrefix(path.Ext(u), "."))
	}
	for _, f := range s.opts.Loader.Formats {
		if strings.EqualFold(f, format) {
			return true
		}
	}
	return false
}

// afterResourceWrite queues a load when a resource's file is new or
// changed. A failure to queue is logged: the resource write stands and
// xloader_submit can queue it again.
func (s *Service) afterResourceWrite(ctx context.Context, old, r *Resource, newUpload bool) {
	if r == nil || !s.loadable(r) {
		return
	}
	if old != nil && !newUpload && old.URL == r.URL && ptrEq(old.URLType, r.URLType) && old.Format == r.Format && old.Hash == r.Hash && old.FileID == r.FileID &&
		ptrEq(old.LastModified, r.LastModified) {
		return
	}
	// the loaded table will count toward the quotas of the user who wrote
	if a := actorFrom(ctx); !a.sysadmin && a.userID != siteUser {
		if err := s.ds.CheckLoadQuota(ctx, a.userID, r.ID); err != nil {
			s.log.Warn("datastore: load not queued", "resource_id", r.ID, "user", a.userID, "err", err)
			return
		}
	}
	if err := s.loader.Submit(ctx, loadJob(ctx, r)); err != nil {
		var ce *ckan.Error
		if !errors.As(err, &ce) { // a full queue is recorded on the job and logged by the loader
			s.log.Error("datastore: queue load", "resource_id", r.ID, "err", err)
		}
	}
}

// afterDatasetWrite queues loads for the resources a package write added
// or changed, and drops the tables of the resources it deleted.
func (s *Service) afterDatasetWrite(ctx context.Context, old, d *Dataset) {
	if s.ds == nil || d == nil {
		return
	}
	for i := range d.Resources {
		r := &d.Resources[i]
		if r.State == StateDeleted {
			if o := findRes(old, r.ID); o != nil && o.State != StateDeleted {
				s.afterResourceDelete(ctx, r.ID)
			}
			continue
		}
		s.afterResourceWrite(ctx, findRes(old, r.ID), r, false)
	}
}

func ptrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// findRes returns resource id of d.
func findRes(d *Dataset, id string) *Resource {
	if d == nil {
		return nil
	}
	for i := range d.Resources {
		if d.Resources[i].ID == id {
			return &d.Resources[i]
		}
	}
	return nil
}

// afterResourceDelete drops the resource's table, as CKAN's DataStore does.
func (s *Service) afterResourceDelete(ctx context.Context, id string) {
	if s.ds == nil {
		return
	}
	defer s.chem.mark(id)
	if _, _, err := s.ds.Delete(ctx, id, map[string]any{}); err != nil {
		if ce, ok := err.(*ckan.Error); !ok || ce.Status != 404 {
			s.log.Error("datastore: drop table of deleted resource", "resource_id", id, "err", err)
		}
	}
}
