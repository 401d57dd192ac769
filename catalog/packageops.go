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

// reorderRef reads package_resource_reorder's required id and order.
func reorderRef(data map[string]any) (string, *ckan.Error) {
	ref, _ := str(data["id"])
	errs := map[string]any{}
	if ref == "" {
		errs["id"] = []string{ckan.MsgMissing}
	}
	if v, given := data["order"]; !given || v == nil {
		errs["order"] = []string{ckan.MsgMissing}
	}
	if len(errs) > 0 {
		return "", ckan.Validation(errs)
	}
	return ref, nil
}

func packageResourceReorder(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, verr := reorderRef(r.Data)
	if verr != nil {
		return nil, verr
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
	d, err := s.datasetByRef(ref, "")
	if err != nil {
		return nil, err
	}
	var ids []string
	_, err = s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
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
	ref, _ := str(r.Data["id"])
	orgRef, _ := str(r.Data["organization_id"])
	var d *Dataset
	var o *Organization
	s.st.view(func() {
		d = s.st.dataset(ref)
		o = s.st.org(orgRef)
	})
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
