package catalog

import (
	"context"
	"errors"
	"fmt"

	"toxgate/catalog/ckan"
)

func init() {
	register("bulk_update_private", false, "Make datasets of an organization private (datasets, org_id; org admins).", bulkUpdate(func(d *Dataset) bool {
		changed := !d.Private
		d.Private = true
		return changed
	}))
	register("bulk_update_public", false, "Make datasets of an organization public (datasets, org_id; org admins).", bulkUpdate(func(d *Dataset) bool {
		changed := d.Private
		d.Private = false
		return changed
	}))
	register("bulk_update_delete", false, "Delete datasets of an organization (datasets, org_id; org admins).", bulkUpdate(func(d *Dataset) bool {
		changed := d.State != StateDeleted
		d.State = StateDeleted
		return changed
	}))
	register("organization_purge", false, "Remove an organization for good (sysadmins; it must have no datasets).", organizationPurge)
}

// datasetRefs reads a list of dataset ids: a JSON list, repeated keys, or
// one id.
func datasetRefs(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		if d, ok := decodeJSON(x); ok {
			if l, isList := d.([]any); isList {
				return datasetRefs(l)
			}
		}
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// bulkParams reads the bulk updates' org_id and datasets.
func bulkParams(data map[string]any) (string, []string, *ckan.Error) {
	errs := map[string]any{}
	orgRef, _ := str(data["org_id"])
	if orgRef == "" {
		errs["org_id"] = []string{ckan.MsgMissing}
	}
	refs, ok := datasetRefs(data["datasets"])
	if _, given := data["datasets"]; !given {
		errs["datasets"] = []string{ckan.MsgMissing}
	} else if !ok {
		errs["datasets"] = []string{"Must be a list of dataset ids"}
	}
	if len(errs) > 0 {
		return "", nil, ckan.Validation(errs)
	}
	return orgRef, refs, nil
}

// bulkUpdate is CKAN's _bulk_update_dataset: change is applied to each
// named dataset of org_id (it reports whether it changed anything). Every
// dataset must belong to the organization (the organization's admins may
// call it: authBulkUpdate), else nothing changes.
func bulkUpdate(change func(*Dataset) bool) handler {
	return func(ctx context.Context, s *Service, r *Request) (any, error) {
		orgRef, refs, verr := bulkParams(r.Data)
		if verr != nil {
			return nil, verr
		}
		var o *Organization
		var ids, foreign []string
		s.st.view(func() {
			o = s.st.org(orgRef)
			if o != nil {
				for _, ref := range refs {
					if d := s.st.dataset(ref); d != nil && d.OwnerOrg == o.ID {
						ids = append(ids, d.ID)
					} else {
						foreign = append(foreign, ref)
					}
				}
			}
		})
		if o == nil {
			return nil, ckan.NotFound("Organization was not found")
		}
		if len(foreign) > 0 {
			msgs := make([]string, len(foreign))
			for i, ref := range foreign {
				msgs[i] = fmt.Sprintf("Dataset %s is not in organization %s", ref, o.Name)
			}
			return nil, ckan.Validation(map[string]any{"datasets": msgs})
		}
		for _, id := range ids {
			_, err := s.mutateDataset(ctx, id, func(base *Dataset) (*Dataset, error) {
				n := base.clone()
				if !change(n) {
					return nil, errUnchanged
				}
				n.MetadataModified = now()
				return n, nil
			})
			if err != nil && !errors.Is(err, errUnchanged) {
				return nil, err
			}
		}
		return nil, nil
	}
}

// errUnchanged stops a bulk write to a dataset already in the wanted state.
var errUnchanged = errors.New("unchanged")

func organizationPurge(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	var o *Organization
	var has bool
	s.st.view(func() {
		o = s.st.org(ref)
		if o != nil {
			for _, d := range s.st.datasets {
				if d.OwnerOrg == o.ID && d.State != StateDeleted {
					has = true
					break
				}
			}
		}
	})
	if o == nil {
		return nil, ckan.NotFound("Organization was not found")
	}
	if has {
		// datasets must have an organization here (CKAN's
		// create_unowned_dataset is off)
		return nil, ckan.Validation(map[string]any{"message": "Organization cannot be purged while it still has datasets"})
	}
	return nil, s.purgeOrg(ctx, o.ID)
}
