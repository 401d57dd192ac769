package catalog

import (
	"context"
	"errors"
	"fmt"

	"toxgate/catalog/ckan"
)

func init() {
	register("package_resource_reorder", false, "Put a dataset's resources in the given order (id, order: resource ids first, the rest after).", packageResourceReorder)
	register("package_owner_org_update", false, "Move a dataset to another organization (id, organization_id; sysadmins).", packageOwnerOrgUpdate)
}

func packageResourceReorder(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	errs := map[string]any{}
	if ref == "" {
		errs["id"] = []string{ckan.MsgMissing}
	}
	if v, given := r.Data["order"]; !given || v == nil {
		errs["order"] = []string{ckan.MsgMissing}
	}
	if len(errs) > 0 {
		return nil, ckan.Validation(errs)
	}
	list, isList := jsonOrString(r.Data["order"]).([]any)
	order, ok := datasetRefs(list)
	if !isList || !ok {
		return nil, ckan.Validation(map[string]any{"order": "Must be a list of resource"})
	}
	seen := map[string]bool{}
	for _, id := range order {
		if seen[id] {
			return nil, ckan.Validation(map[string]any{"order": "Must supply unique resource_ids"})
		}
		seen[id] = true
	}
	c := r.Caller
	s.st.mu.RLock()
	d := s.st.dataset(ref)
	readable := d != nil && s.st.canRead(c, d)
	s.st.mu.RUnlock()
	if d == nil {
		return nil, ckan.NotFound("")
	}
	if !readable {
		return nil, denied(c, "read package %s", d.ID)
	}
	var ids []string
	_, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		active := base.activeResources()
		byID := make(map[string]Resource, len(active))
		for _, res := range active {
			byID[res.ID] = res
		}
		n := base.clone()
		n.Resources = n.Resources[:0]
		for _, id := range order {
			res, ok := byID[id]
			if !ok {
				return nil, ckan.Validation(map[string]any{"order": fmt.Sprintf("resource_id %s can not be found", id)})
			}
			n.Resources = append(n.Resources, res)
		}
		for _, res := range base.Resources {
			if !seen[res.ID] {
				n.Resources = append(n.Resources, res)
			}
		}
		s.st.mu.RLock()
		mayEdit := s.st.canEdit(c, base, PermUpdateDataset)
		s.st.mu.RUnlock()
		if c.Anonymous() {
			return nil, needsUser("package_update")
		}
		if !mayEdit {
			return nil, denied(c, "edit package %s", base.ID)
		}
		ids = ids[:0]
		for _, res := range n.activeResources() {
			ids = append(ids, res.ID)
		}
		n.MetadataModified = now()
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": ref, "order": ids}, nil
}

func packageOwnerOrgUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	if r.Caller.Anonymous() {
		return nil, needsUser("package_owner_org_update")
	}
	if !r.Caller.Sysadmin {
		return nil, ckan.NotAuthorized("")
	}
	ref, _ := str(r.Data["id"])
	orgRef, _ := str(r.Data["organization_id"])
	s.st.mu.RLock()
	d := s.st.dataset(ref)
	o := s.st.org(orgRef)
	s.st.mu.RUnlock()
	if d == nil {
		return nil, ckan.NotFound("Package was not found.")
	}
	if orgRef == "" {
		// datasets need an organization here (CKAN's create_unowned_dataset is off)
		return nil, ckan.FieldError("organization_id", ckan.MsgMissing)
	}
	if o == nil || o.State != StateActive {
		return nil, ckan.NotFound("Organization was not found.")
	}
	_, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		if base.OwnerOrg == o.ID {
			return nil, errUnchanged
		}
		n := base.clone()
		n.OwnerOrg = o.ID
		n.MetadataModified = now()
		return n, nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, err
	}
	return nil, nil
}
