package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

// Dataset versions, as ckanext-versions names them: dataset_version_create,
// _list, _show, _update, _delete. A version freezes the dataset's
// package_show dict, holds its resources' files by id (never copied; a held
// file is not freed) and copies their DataStore tables (datastore
// snapshots). package_show, resource_show, the downloads, datastore_info,
// datastore_search and datastore_search_sql take "version" (an id or a
// name) and answer as of that version.

func init() {
	registerOwnWrites("dataset_version_create", "Freeze a dataset's metadata, files and tables as a named version (dataset, name, description).", datasetVersionCreate)
	register("dataset_version_list", true, "The versions of a dataset, newest first (dataset).", datasetVersionList)
	register("dataset_version_show", true, "One version (id; or dataset and version).", datasetVersionShow)
	register("dataset_version_update", false, "Change a version's name or description (id, name, description).", datasetVersionUpdate)
	registerInternal("dataset_version_doi_set", "Record the DOI the gateway registered for a version (id, doi); a DOI once recorded stays.", datasetVersionDOISet)
	register("dataset_version_delete", false, "Delete a version (sysadmins; purge=true also frees its files and tables).", datasetVersionDelete)
}

// Bounds of a version's name and description.
const (
	MaxVersionNameBytes        = 100
	MaxVersionDescriptionBytes = 10000
	// defaultMaxVersions is catalog.versions.max_per_dataset when Options
	// leave it 0.
	defaultMaxVersions = 100
)

// ParseVersionName checks a version name: text of 1 to 100 bytes of valid
// UTF-8 without control characters or surrounding spaces, and not shaped
// like an id (a UUID), so that a reference is never both.
func ParseVersionName(v any) (string, string) {
	s, ok := v.(string)
	if !ok {
		return "", ckan.MsgMissing
	}
	switch {
	case s == "":
		return "", ckan.MsgMissing
	case len(s) > MaxVersionNameBytes:
		return "", fmt.Sprintf("Name must be at most %d bytes long", MaxVersionNameBytes)
	case !utf8.ValidString(s):
		return "", "Name must be valid UTF-8"
	case strings.TrimSpace(s) != s:
		return "", "Name must not start or end with spaces"
	case looksLikeID(s):
		return "", "Name must not look like an id"
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "", "Name must not contain control characters"
		}
	}
	return s, ""
}

// looksLikeID reports whether s is shaped as a UUID.
func looksLikeID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// versionRef is a data dict's version reference (an id or a name): "" when
// absent; an error when it is not text of sensible length.
func versionRef(data map[string]any, key string) (string, *ckan.Error) {
	v, ok := data[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok || len(s) > MaxVersionNameBytes || !utf8.ValidString(s) {
		return "", ckan.FieldError(key, "Not a version id or name")
	}
	return s, nil
}

// versionDict is a version on the wire (ckanext-versions' shape, with the
// resources it holds).
func versionDict(v *Version) map[string]any {
	res := make([]map[string]any, 0, len(v.Resources))
	for _, r := range v.Resources {
		m := map[string]any{"id": r.ID, "datastore": r.Table != ""}
		if r.SHA256 != "" {
			m["sha256"] = r.SHA256
		}
		res = append(res, m)
	}
	d := map[string]any{"id": v.ID, "package_id": v.DatasetID, "name": v.Name, "description": v.Description,
		"created": ckanTime(v.Created), "creator_user_id": v.CreatorUserID, "resources": res}
	if v.DOI != "" {
		d["doi"] = v.DOI
	}
	return d
}

// PackageDict is the version's frozen package_show dict.
func (v *Version) PackageDict() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(v.Package), &m); err != nil {
		return nil, fmt.Errorf("version %s: frozen metadata: %w", v.ID, err)
	}
	return m, nil
}

// VersionOf finds the active version ref (an id or a name) of dataset (an
// id or a name); nil when there is none. The citation code asks it.
func (s *Service) VersionOf(ctx context.Context, dataset, ref string) (*Version, error) {
	d := s.st.lookupDataset(dataset)
	if d == nil || ref == "" {
		return nil, nil
	}
	return s.findVersion(ctx, d.ID, "", ref)
}

// findVersion finds the active version ref (id, else name) of dataset id,
// or (datasetID "") of the dataset holding resource resID.
func (s *Service) findVersion(ctx context.Context, datasetID, resID, ref string) (*Version, error) {
	belongs := func(v *Version) bool {
		if v == nil || v.State != VersionActive {
			return false
		}
		if datasetID != "" {
			return v.DatasetID == datasetID
		}
		for _, id := range v.ResourceIDs {
			if id == resID {
				return true
			}
		}
		return resID == ""
	}
	v, err := s.vs.get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if belongs(v) {
		return v, nil
	}
	f := bson.D{{Key: "name", Value: ref}, {Key: "state", Value: VersionActive}}
	if datasetID != "" {
		f = append(f, bson.E{Key: "dataset_id", Value: datasetID})
	} else if resID != "" {
		f = append(f, bson.E{Key: "resource_ids", Value: resID})
	} else {
		return nil, nil // a name alone names no single version
	}
	list, err := s.vs.find(ctx, f, true)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return list[0], nil
}

// versionNotFound is the 404 of an unknown version.
func versionNotFound() *ckan.Error { return ckan.NotFound("Version not found") }

func datasetVersionCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["dataset"])
	name, msg := ParseVersionName(r.Data["name"])
	if msg != "" {
		return nil, ckan.FieldError("name", msg)
	}
	desc, _ := str(r.Data["description"])
	if len(desc) > MaxVersionDescriptionBytes {
		return nil, ckan.FieldError("description", fmt.Sprintf("Description must be at most %d bytes long", MaxVersionDescriptionBytes))
	}
	v, err := s.CreateVersion(ctx, r.Caller, ref, name, desc, r.SiteURL)
	if err != nil {
		return nil, err
	}
	return versionDict(v), nil
}

// CreateVersion makes version name of dataset ref as caller c (whose right
// to edit the dataset is checked by the caller of this function): the
// record is written pending with the files and tables it holds, the
// tables are copied, the files checked, and the record marked active
// last. A failure removes what was written.
func (s *Service) CreateVersion(ctx context.Context, c Caller, ref, name, desc, siteURL string) (*Version, error) {
	at := now()
	v := &Version{ID: newID(), Name: name, Description: desc, Created: at, Touched: at, CreatorUserID: c.UserID, State: VersionPending}
	var hashes map[string]string
	err := s.catalogWrite(ctx, func() error {
		d := s.st.lookupDataset(ref)
		if d == nil {
			return ckan.NotFound("Package was not found.")
		}
		v.DatasetID = d.ID
		existing, err := s.vs.ofDataset(ctx, d.ID, "")
		if err != nil {
			return err
		}
		live := 0
		for _, e := range existing {
			if e.State == VersionDeleted {
				continue
			}
			live++
			if e.Name == name && e.State == VersionActive {
				return ckan.FieldError("name", "Version name already exists for this dataset")
			}
		}
		if max := s.maxVersions(); live >= max {
			return ckan.ValidationMessage(fmt.Sprintf("The dataset has %d versions, at most %d (catalog.versions.max_per_dataset)", live, max))
		}
		raw, err := viewed2(s.st, func() (ckan.RawJSON, error) {
			if d = s.st.datasets[d.ID]; d == nil {
				return nil, ckan.NotFound("Package was not found.")
			}
			return s.st.datasetJSON(d, siteURL)
		})
		if err != nil {
			return err
		}
		v.Package = string(raw)
		hashes = map[string]string{}
		for _, res := range d.Resources {
			if res.State == StateDeleted {
				continue
			}
			vr := VersionResource{ID: res.ID, FileID: res.FileID}
			if res.FileID != "" {
				vr.SHA256 = strings.TrimPrefix(res.Hash, "sha256:")
				v.Files = append(v.Files, res.FileID)
				hashes[res.FileID] = vr.SHA256
			}
			if s.ds != nil {
				has, err := s.ds.HasTable(ctx, res.ID)
				if err != nil {
					return err
				}
				if has {
					vr.Table = datastore.SnapshotName(v.ID, res.ID)
				}
			}
			v.Resources = append(v.Resources, vr)
			v.ResourceIDs = append(v.ResourceIDs, res.ID)
		}
		// pending: from here on nothing frees the files it names; touched
		// now, not when the call began, so that the sweep's grace counts
		// from the insert
		v.Touched = now()
		return s.vs.insert(ctx, v)
	})
	if err != nil {
		return nil, err
	}
	// the heartbeat stops before the version is marked active: the store
	// applies an update as a read and a write of the whole record, so a
	// touch running beside the activation could write "pending" back
	stop := s.heartbeat(context.WithoutCancel(ctx), v.ID)
	err = s.fillVersion(ctx, v, hashes)
	stop()
	if err == nil {
		err = s.activateVersion(ctx, v)
	}
	if err != nil {
		s.dropVersionData(context.WithoutCancel(ctx), v, false)
		return nil, err
	}
	return v, nil
}

// fillVersion copies the tables of pending version v and checks that its
// files are there.
func (s *Service) fillVersion(ctx context.Context, v *Version, hashes map[string]string) error {
	for i := range v.Resources {
		r := &v.Resources[i]
		if r.Table == "" {
			continue
		}
		if err := s.touchVersion(ctx, v.ID); err != nil {
			return err
		}
		ok, err := s.ds.Snapshot(ctx, r.ID, r.Table)
		if err != nil {
			return fmt.Errorf("version %s: snapshot of %s: %w", v.ID, r.ID, err)
		}
		if !ok { // the table was dropped meanwhile
			r.Table = ""
		}
	}
	for _, id := range v.Files {
		info, err := s.files.Stat(ctx, id)
		if err != nil || (hashes[id] != "" && info.SHA256 != hashes[id]) {
			return ckan.ValidationMessage("The dataset's files changed while the version was made; try again")
		}
	}
	return nil
}

// activateVersion marks filled version v active, unless a sweep took it
// first: the maker and the sweeps of every process settle the version's
// end with one claim (decideVersion), so that it is never both.
func (s *Service) activateVersion(ctx context.Context, v *Version) error {
	won, _, _, err := s.decideVersion(ctx, v.ID, VersionActive)
	if err != nil {
		return err
	}
	if !won {
		return ckan.ValidationMessage("The version took longer than the sweep allows; try again")
	}
	ok, err := s.vs.activate(ctx, v.ID, v.Resources)
	if err != nil {
		return err
	}
	if !ok {
		return ckan.NotFound("Package was not found.")
	}
	v.State = VersionActive
	return nil
}

// decideVersion claims the end of pending version id (VersionActive by
// its maker, versionAbandoned by a sweep) once across processes; see
// recordStore.decide.
func (s *Service) decideVersion(ctx context.Context, id, to string) (won bool, winner string, at time.Time, err error) {
	return s.c.decide(ctx, claimKey(kindVersionEnd, id, 1), to)
}

// dropVersionData removes version v's snapshot tables and, with files,
// the files it held that nothing else holds, then its record.
func (s *Service) dropVersionData(ctx context.Context, v *Version, files bool) {
	for _, r := range v.Resources {
		if r.Table != "" && s.ds != nil {
			if err := s.ds.DropSnapshot(ctx, r.Table); err != nil {
				s.log.Warn("version: snapshot not dropped; the sweep will", "version", v.ID, "table", r.Table, "err", err)
				return
			}
		}
	}
	if err := s.vs.remove(ctx, v.ID); err != nil {
		s.log.Warn("version: record not removed; the sweep will", "version", v.ID, "err", err)
		return
	}
	if !files {
		return
	}
	held := viewed(s.st, func() map[string]bool {
		out := map[string]bool{}
		for _, d := range s.st.datasets {
			for id := range fileIDs(d) {
				out[id] = true
			}
		}
		return out
	})
	for _, id := range v.Files {
		if held[id] {
			continue
		}
		if other, err := s.vs.holdsFile(ctx, id); err != nil || other {
			continue
		}
		if err := s.files.Delete(ctx, id); err != nil {
			s.log.Warn("version: file not freed; the sweep will", "file_id", id, "err", err)
		}
	}
}

func (s *Service) maxVersions() int {
	if s.opts.MaxVersionsPerDataset > 0 {
		return s.opts.MaxVersionsPerDataset
	}
	return defaultMaxVersions
}

func datasetVersionList(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["dataset"])
	d := s.st.lookupDataset(ref)
	if d == nil {
		return nil, ckan.NotFound("Package was not found.")
	}
	list, err := s.vs.ofDataset(ctx, d.ID, VersionActive)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.After(list[j].Created) })
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i] = versionDict(v)
	}
	return out, nil
}

// versionByRequest is the version a version action names: "id" (an id),
// or "dataset" and "version" (an id or a name).
func (s *Service) versionByRequest(ctx context.Context, data map[string]any) (*Version, error) {
	if id, _ := str(data["id"]); id != "" {
		v, err := s.vs.get(ctx, id)
		if err != nil {
			return nil, err
		}
		if v == nil || v.State != VersionActive {
			return nil, versionNotFound()
		}
		return v, nil
	}
	ref, cerr := versionRef(data, "version")
	if cerr != nil {
		return nil, cerr
	}
	ds, _ := str(data["dataset"])
	if ref == "" || ds == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	v, err := s.VersionOf(ctx, ds, ref)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, versionNotFound()
	}
	return v, nil
}

func datasetVersionShow(ctx context.Context, s *Service, r *Request) (any, error) {
	v, err := s.versionByRequest(ctx, r.Data)
	if err != nil {
		return nil, err
	}
	return versionDict(v), nil
}

func datasetVersionUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	v, err := s.versionByRequest(ctx, r.Data)
	if err != nil {
		return nil, err
	}
	set := bson.D{}
	if n, ok := r.Data["name"]; ok {
		name, msg := ParseVersionName(n)
		if msg != "" {
			return nil, ckan.FieldError("name", msg)
		}
		if name != v.Name {
			others, err := s.vs.ofDataset(ctx, v.DatasetID, VersionActive)
			if err != nil {
				return nil, err
			}
			for _, o := range others {
				if o.Name == name {
					return nil, ckan.FieldError("name", "Version name already exists for this dataset")
				}
			}
		}
		v.Name = name
		set = append(set, bson.E{Key: "name", Value: name})
	}
	if dv, ok := r.Data["description"]; ok {
		desc, _ := str(dv)
		if len(desc) > MaxVersionDescriptionBytes {
			return nil, ckan.FieldError("description", fmt.Sprintf("Description must be at most %d bytes long", MaxVersionDescriptionBytes))
		}
		v.Description = desc
		set = append(set, bson.E{Key: "description", Value: desc})
	}
	if len(set) > 0 {
		if err := s.vs.setFields(ctx, v.ID, set); err != nil {
			return nil, err
		}
	}
	return versionDict(v), nil
}

// maxDOIBytes bounds a recorded DOI.
const maxDOIBytes = 300

// datasetVersionDOISet records a version's DOI (registered by the gateway
// with DataCite). A DOI is permanent: the same DOI again is a no-op,
// another one is refused.
func datasetVersionDOISet(ctx context.Context, s *Service, r *Request) (any, error) {
	v, err := s.versionByRequest(ctx, r.Data)
	if err != nil {
		return nil, err
	}
	doi, _ := str(r.Data["doi"])
	if !strings.HasPrefix(doi, "10.") || len(doi) > maxDOIBytes || !strings.Contains(doi, "/") || strings.ContainsFunc(doi, unicode.IsSpace) {
		return nil, ckan.FieldError("doi", "must be a DOI such as 10.5072/abc")
	}
	switch v.DOI {
	case doi:
		return versionDict(v), nil
	case "":
	default:
		return nil, ckan.FieldError("doi", "this version already has the DOI "+v.DOI)
	}
	if err := s.vs.setFields(ctx, v.ID, bson.D{{Key: "doi", Value: doi}}); err != nil {
		return nil, err
	}
	v.DOI = doi
	return versionDict(v), nil
}

func datasetVersionDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	id, _ := str(r.Data["id"])
	if id == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	v, err := s.vs.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if v == nil || v.State == VersionPending {
		return nil, versionNotFound()
	}
	purge, ok := ckan.AsBool(r.Data["purge"])
	if !ok {
		return nil, ckan.FieldError("purge", "Not a boolean")
	}
	if purge {
		s.dropVersionData(ctx, v, true)
		return nil, nil
	}
	if v.State == VersionDeleted {
		return nil, versionNotFound()
	}
	return nil, s.vs.setFields(ctx, v.ID, bson.D{{Key: "state", Value: VersionDeleted}})
}
