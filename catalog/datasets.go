package catalog

import (
	"context"

	"toxgate/catalog/ckan"
)

func init() {
	register("package_list", true, "Names of the active public datasets, by name (limit, offset).", packageList)
	register("package_show", true, "One dataset by id or name.", packageShow)
	register("package_create", false, "Create a dataset (name and owner_org required).", packageCreate)
	register("package_update", false, "Replace a dataset: omitted fields are cleared.", packageUpdate)
	register("package_patch", false, "Change the given top-level fields of a dataset.", packagePatch)
	register("package_delete", false, "Soft-delete a dataset (state deleted).", packageDelete)
	register("dataset_purge", false, "Remove a dataset for good (sysadmins).", datasetPurge)
}

func packageList(_ context.Context, s *Service, r *Request) (any, error) {
	limit, err := ckan.Natural(r.Data, "limit", -1)
	if err != nil {
		return nil, err
	}
	offset, err := ckan.Natural(r.Data, "offset", 0)
	if err != nil {
		return nil, err
	}
	names := s.st.publicDatasetNames()
	offset = min(offset, len(names))
	names = names[offset:]
	if limit >= 0 && limit < len(names) {
		names = names[:limit]
	}
	return names, nil
}

// datasetRef is the id-or-name of package_show and friends.
func datasetRef(data map[string]any) string {
	ref, _ := str(data["id"])
	if ref == "" {
		ref, _ = str(data["name_or_id"])
	}
	return ref
}

func packageShow(_ context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		return versionPackageShow(r.version)
	}
	ref := datasetRef(r.Data)
	if ref == "" {
		return nil, ckan.FieldError("name_or_id", ckan.MsgMissing)
	}
	return viewed2(s.st, func() (any, error) {
		d := s.st.dataset(ref)
		if d == nil {
			return nil, ckan.NotFound("")
		}
		return s.st.datasetJSON(d, r.SiteURL)
	})
}

func packageCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	c := r.Caller
	at := now()
	in, verr := viewed2(s.st, func() (datasetInput, *ckan.Error) {
		return s.st.buildDataset(c, r.Data, nil, at, setsStateOnCreate(c))
	})
	if verr != nil {
		return nil, verr
	}
	if err := s.insertDataset(ctx, in.d); err != nil {
		return nil, err
	}
	s.afterDatasetWrite(ctx, nil, in.d)
	return s.show(in.d.ID, r.SiteURL), nil
}

// show renders the cached dataset id.
func (s *Service) show(id, siteURL string) *DatasetDict {
	return viewed(s.st, func() *DatasetDict {
		if d := s.st.datasets[id]; d != nil {
			return s.st.datasetDict(d, siteURL)
		}
		return nil
	})
}

// datasetByRef finds dataset ref (id or name), or CKAN's 404 with
// notFound.
func (s *Service) datasetByRef(ref, notFound string) (*Dataset, error) {
	d := s.st.lookupDataset(ref)
	if d == nil {
		return nil, ckan.NotFound(notFound)
	}
	return d, nil
}

func packageUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		ref, _ = str(r.Data["name"])
	}
	if ref == "" {
		return nil, ckan.Validation(map[string]any{"id": ckan.MsgMissing})
	}
	d, err := s.datasetByRef(ref, "Package was not found.")
	if err != nil {
		return nil, err
	}
	return s.replaceWith(ctx, r, d.ID, func(*Dataset) map[string]any { return r.Data })
}

// replaceWith runs package_update semantics with the data dict that input
// builds from the freshest stored dataset.
func (s *Service) replaceWith(ctx context.Context, r *Request, id string, input func(base *Dataset) map[string]any) (any, error) {
	c := r.Caller
	var before *Dataset
	next, err := s.mutateDataset(ctx, id, func(base *Dataset) (*Dataset, error) {
		before = base
		at := now()
		in, verr := viewed2(s.st, func() (datasetInput, *ckan.Error) {
			return s.st.buildDataset(c, input(base), base, at, true)
		})
		if verr != nil {
			return nil, verr
		}
		in.d.MetadataModified = at
		return in.d, nil
	})
	if err != nil {
		return nil, err
	}
	s.afterDatasetWrite(ctx, before, next)
	return s.show(next.ID, r.SiteURL), nil
}

func packagePatch(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.ValidationMessage("Missing id, can not get Package object")
	}
	d, err := s.datasetByRef(ref, "")
	if err != nil {
		return nil, err
	}
	return s.replaceWith(ctx, r, d.ID, func(base *Dataset) map[string]any {
		merged := datasetInputMap(base)
		for k, v := range r.Data {
			merged[k] = v
		}
		merged["id"] = base.ID
		return merged
	})
}

func packageDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.Validation(map[string]any{"id": ckan.MsgMissing})
	}
	d, err := s.datasetByRef(ref, "")
	if err != nil {
		return nil, err
	}
	_, err = s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		n.State = StateDeleted
		n.MetadataModified = now()
		return n, nil
	})
	return nil, err
}

func datasetPurge(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	d := s.st.lookupDataset(ref)
	if d == nil {
		return nil, ckan.NotFound("Dataset was not found")
	}
	if err := s.purgeDataset(ctx, d.ID); err != nil {
		return nil, err
	}
	for i := range d.Resources {
		s.afterResourceDelete(ctx, d.Resources[i].ID)
	}
	return nil, nil
}

// datasetInputMap is d as a package_update data dict (package_patch starts
// from it).
func datasetInputMap(d *Dataset) map[string]any {
	m := map[string]any{
		"id": d.ID, "name": d.Name, "title": d.Title, "owner_org": d.OwnerOrg, "private": d.Private,
		"state": d.State, "type": d.Type,
	}
	opt := func(k string, p *string) {
		if p != nil {
			m[k] = *p
		}
	}
	opt("author", d.Author)
	opt("author_email", d.AuthorEmail)
	opt("maintainer", d.Maintainer)
	opt("maintainer_email", d.MaintainerEmail)
	opt("notes", d.Notes)
	opt("url", d.URL)
	opt("version", d.Version)
	opt("license_id", d.LicenseID)
	tags := make([]any, len(d.Tags))
	for i, t := range d.Tags {
		tags[i] = map[string]any{"name": t}
	}
	m["tags"] = append(tags, vocabTagInputs(d)...)
	m["groups"] = groupInputs(d)
	extras := make([]any, len(d.Extras))
	for i, e := range d.Extras {
		extras[i] = map[string]any{"key": e.Key, "value": e.Value}
	}
	m["extras"] = extras
	active := d.activeResources()
	res := make([]any, len(active))
	for i := range active {
		res[i] = resourceInputMap(&active[i])
	}
	m["resources"] = res
	return m
}

// resourceInputMap is r as a resource_update data dict.
func resourceInputMap(r *Resource) map[string]any {
	m := map[string]any{"id": r.ID, "url": r.URL, "format": r.Format, "hash": r.Hash, "created": r.Created}
	for k, v := range r.Extras {
		m[k] = v
	}
	opt := func(k string, p *string) {
		if p != nil {
			m[k] = *p
		}
	}
	opt("name", r.Name)
	opt("description", r.Description)
	opt("mimetype", r.Mimetype)
	opt("mimetype_inner", r.MimetypeInner)
	opt("last_modified", r.LastModified)
	opt("cache_url", r.CacheURL)
	opt("cache_last_updated", r.CacheLastUpdated)
	opt("resource_type", r.ResourceType)
	opt("url_type", r.URLType)
	if r.Size != nil {
		m["size"] = *r.Size
	}
	return m
}
