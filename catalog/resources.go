package catalog

import (
	"context"

	"toxgate/catalog/ckan"
)

func init() {
	register("resource_show", true, "One resource by id.", resourceShow)
	register("resource_create", false, "Add a resource to a dataset (package_id required).", resourceCreate)
	register("resource_update", false, "Replace a resource.", resourceUpdate)
	register("resource_patch", false, "Change the given fields of a resource.", resourcePatch)
	register("resource_delete", false, "Delete a resource.", resourceDelete)
}

// findResource locates an active resource by id. Callers hold a lock.
func (st *readModel) findResource(id string) (*Dataset, int) {
	d := st.datasets[st.resources[id]]
	if d == nil {
		return nil, -1
	}
	pos := 0
	for i, r := range d.Resources {
		if r.State == StateDeleted {
			continue
		}
		if r.ID == id {
			return d, i
		}
		pos++
	}
	return nil, -1
}

// position is the index of resource i among the active resources of d.
func position(d *Dataset, i int) int {
	pos := 0
	for j := 0; j < i; j++ {
		if d.Resources[j].State != StateDeleted {
			pos++
		}
	}
	return pos
}

func resourceShow(_ context.Context, s *Service, r *Request) (any, error) {
	if r.version != nil {
		id, _ := str(r.Data["id"])
		return versionResourceShow(r.version, id)
	}
	return viewed2(s.st, func() (any, error) {
		d, i, err := s.st.resourceByID(r)
		if err != nil {
			return nil, err
		}
		return resourceDict(d, &d.Resources[i], position(d, i), r.SiteURL), nil
	})
}

// resourceByID finds the active resource r.Data["id"] names (the
// caller's right to read it is authResourceShow's). Callers hold a read
// lock.
func (st *readModel) resourceByID(r *Request) (*Dataset, int, error) {
	id, _ := str(r.Data["id"])
	if id == "" {
		return nil, -1, ckan.FieldError("id", ckan.MsgMissing)
	}
	d, i := st.findResource(id)
	if d == nil {
		return nil, -1, ckan.NotFound("Resource was not found.")
	}
	return d, i, nil
}

func resourceCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	pkg, _ := str(r.Data["package_id"])
	if pkg == "" {
		return nil, ckan.FieldError("package_id", ckan.MsgMissing)
	}
	d, err := s.datasetByRef(pkg, "")
	if err != nil {
		return nil, err
	}
	var newID string
	next, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		at := now()
		res, rerr := viewed2(s.st, func() (Resource, map[string]any) { return s.st.buildResource(r.Data, nil, base.ID, at) })
		if rerr != nil {
			return nil, ckan.Validation(rerr)
		}
		for _, old := range base.Resources {
			if old.ID == res.ID {
				return nil, ckan.FieldError("id", "Resource id already exists.")
			}
		}
		n := base.clone()
		n.Resources = append(n.Resources, res)
		n.MetadataModified = at
		newID = res.ID
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	_, newUpload := r.Data["upload"].(FileRef)
	s.afterResourceWrite(ctx, nil, findRes(next, newID), newUpload)
	return resourceOf(next, newID, r.SiteURL), nil
}

// resourceOf renders resource id of d.
func resourceOf(d *Dataset, id, siteURL string) map[string]any {
	for i := range d.Resources {
		if d.Resources[i].ID == id {
			return resourceDict(d, &d.Resources[i], position(d, i), siteURL)
		}
	}
	return nil
}

// changeResource finds resource id and replaces it with what build returns
// (the right to edit its dataset is resourceWriteAuth's).
func (s *Service) changeResource(ctx context.Context, r *Request, build func(old *Resource, datasetID string) (*Resource, error)) (*Dataset, string, error) {
	id, _ := str(r.Data["id"])
	if id == "" {
		return nil, "", ckan.FieldError("id", ckan.MsgMissing)
	}
	d, _ := s.st.lookupResource(id)
	if d == nil {
		return nil, "", ckan.NotFound("Resource was not found.")
	}
	next, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		for i := range n.Resources {
			if n.Resources[i].ID != id || n.Resources[i].State == StateDeleted {
				continue
			}
			res, err := build(&n.Resources[i], base.ID)
			if err != nil {
				return nil, err
			}
			n.Resources[i] = *res
			n.MetadataModified = now()
			return n, nil
		}
		return nil, ckan.NotFound("Resource was not found.")
	})
	return next, id, err
}

func resourceUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.resourceReplace(ctx, r, func(*Resource) map[string]any { return r.Data })
}

func resourcePatch(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.resourceReplace(ctx, r, func(old *Resource) map[string]any {
		m := resourceInputMap(old)
		for k, v := range r.Data {
			m[k] = v
		}
		return m
	})
}

func (s *Service) resourceReplace(ctx context.Context, r *Request, input func(old *Resource) map[string]any) (any, error) {
	var before Resource
	next, id, err := s.changeResource(ctx, r, func(old *Resource, datasetID string) (*Resource, error) {
		before = *old
		at := now()
		res, rerr := viewed2(s.st, func() (Resource, map[string]any) { return s.st.buildResource(input(old), old, datasetID, at) })
		if rerr != nil {
			return nil, ckan.Validation(rerr)
		}
		return &res, nil
	})
	if err != nil {
		return nil, err
	}
	_, newUpload := r.Data["upload"].(FileRef)
	s.afterResourceWrite(ctx, &before, findRes(next, id), newUpload)
	return resourceOf(next, id, r.SiteURL), nil
}

func resourceDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	_, _, err := s.changeResource(ctx, r, func(old *Resource, _ string) (*Resource, error) {
		res := *old
		res.State = StateDeleted
		return &res, nil
	})
	if err == nil {
		id, _ := str(r.Data["id"])
		s.afterResourceDelete(ctx, id)
	}
	return nil, err
}
