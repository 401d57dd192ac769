package catalog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"toxgate/catalog/ckan"
)

func init() {
	register("package_collaborator_create", false, "Make a user a collaborator on a dataset, or change their capacity (id, user_id, capacity).", packageCollaboratorCreate)
	register("package_collaborator_list", true, "The collaborators of a dataset (id, capacity).", packageCollaboratorList)
	register("package_collaborator_delete", false, "Remove a collaborator from a dataset (id, user_id).", packageCollaboratorDelete)
	register("package_collaborator_list_for_user", true, "The datasets a user collaborates on (id, capacity).", packageCollaboratorListForUser)
}

// Collaborator is a user's capacity on one dataset (CKAN's PackageMember):
// a member reads it, an editor also edits it and its resources, an admin
// (with Options.AllowAdminCollaborators) also manages its collaborators.
type Collaborator struct {
	UserID   string    `bson:"user_id"`
	Capacity string    `bson:"capacity"`
	Modified time.Time `bson:"modified"`
}

// collaboratorCapacities are the capacities package_collaborator_create
// accepts, in CKAN's order (authz.get_collaborator_capacities).
func (st *readModel) collaboratorCapacities() []string {
	if st.allowAdminCollaborators {
		return []string{RoleAdmin, RoleEditor, RoleMember}
	}
	return []string{RoleEditor, RoleMember}
}

// collaboratorsOff is the error of every collaborator action when
// catalog.allow_dataset_collaborators is off.
func collaboratorsOff() *ckan.Error {
	return ckan.Validation(map[string]any{"message": "Dataset collaborators not enabled"})
}

// bust is CKAN's _get_or_bust: the string values of keys, or a validation
// error naming every missing one.
func bust(data map[string]any, keys ...string) ([]string, *ckan.Error) {
	out := make([]string, len(keys))
	errs := map[string]any{}
	for i, k := range keys {
		out[i], _ = str(data[k])
		if out[i] == "" {
			errs[k] = []string{ckan.MsgMissing}
		}
	}
	if len(errs) > 0 {
		return nil, ckan.Validation(errs)
	}
	return out, nil
}

// collaboratorDict is CKAN's dictized PackageMember.
func collaboratorDict(datasetID string, m Collaborator) map[string]any {
	return map[string]any{"package_id": datasetID, "user_id": m.UserID, "capacity": m.Capacity, "modified": ckanTime(m.Modified)}
}

func packageCollaboratorCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	v, verr := bust(r.Data, "id", "user_id", "capacity")
	if verr != nil {
		return nil, verr
	}
	ref, userRef, capacity := v[0], v[1], v[2]
	allowed := s.st.collaboratorCapacities()
	if !slices.Contains(allowed, capacity) {
		return nil, ckan.Validation(map[string]any{"message": fmt.Sprintf("Role must be one of \"%s\"", strings.Join(allowed, ", "))})
	}
	d, err := s.datasetByRef(ref, "Dataset not found")
	if err != nil {
		return nil, err
	}
	u, err := s.c.findUser(ctx, userRef)
	if err != nil {
		return nil, err
	}
	if u == nil || u.State == StateDeleted {
		return nil, ckan.NotFound("User not found")
	}
	if !s.st.allowCollaborators {
		return nil, collaboratorsOff()
	}
	var out Collaborator
	_, err = s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		out = Collaborator{UserID: u.ID, Capacity: capacity, Modified: now()}
		for i := range n.Collaborators {
			if n.Collaborators[i].UserID == u.ID {
				n.Collaborators[i] = out
				return n, nil
			}
		}
		n.Collaborators = append(n.Collaborators, out)
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("collaborator added", "user", u.Name, "dataset", d.ID, "capacity", capacity)
	return collaboratorDict(d.ID, out), nil
}

func packageCollaboratorDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	v, verr := bust(r.Data, "id", "user_id")
	if verr != nil {
		return nil, verr
	}
	ref, userRef := v[0], v[1]
	d, err := s.datasetByRef(ref, "Package not found")
	if err != nil {
		return nil, err
	}
	if !s.st.allowCollaborators {
		return nil, collaboratorsOff()
	}
	u, err := s.c.findUser(ctx, userRef)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, ckan.NotFound("User not found")
	}
	_, err = s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		kept := n.Collaborators[:0]
		for _, m := range n.Collaborators {
			if m.UserID != u.ID {
				kept = append(kept, m)
			}
		}
		if len(kept) == len(base.Collaborators) {
			return nil, ckan.NotFound(fmt.Sprintf("User %s is not a collaborator on this package", userRef))
		}
		n.Collaborators = kept
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("collaborator removed", "user", u.Name, "dataset", d.ID)
	return nil, nil
}

// capacityFilter reads the optional capacity of the list actions.
func (st *readModel) capacityFilter(data map[string]any) (string, *ckan.Error) {
	capacity, _ := str(data["capacity"])
	if allowed := st.collaboratorCapacities(); capacity != "" && !slices.Contains(allowed, capacity) {
		return "", ckan.Validation(map[string]any{"message": fmt.Sprintf("Capacity must be one of \"%s\"", strings.Join(allowed, ", "))})
	}
	return capacity, nil
}

func packageCollaboratorList(ctx context.Context, s *Service, r *Request) (any, error) {
	v, verr := bust(r.Data, "id")
	if verr != nil {
		return nil, verr
	}
	d, err := s.datasetByRef(v[0], "Package not found")
	if err != nil {
		return nil, err
	}
	if !s.st.allowCollaborators {
		return nil, collaboratorsOff()
	}
	capacity, cerr := s.st.capacityFilter(r.Data)
	if cerr != nil {
		return nil, cerr
	}
	ids := make([]string, len(d.Collaborators))
	for i, m := range d.Collaborators {
		ids[i] = m.UserID
	}
	users, err := s.c.findUsers(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, m := range d.Collaborators {
		// CKAN's user_delete drops the user's collaborations; the gateway
		// core only marks the user deleted, so they are left out here
		if u := users[m.UserID]; u != nil && u.State != StateDeleted && (capacity == "" || m.Capacity == capacity) {
			out = append(out, collaboratorDict(d.ID, m))
		}
	}
	return out, nil
}

func packageCollaboratorListForUser(ctx context.Context, s *Service, r *Request) (any, error) {
	v, verr := bust(r.Data, "id")
	if verr != nil {
		return nil, verr
	}
	if !s.st.allowCollaborators {
		return nil, collaboratorsOff()
	}
	ref := v[0]
	u, err := s.c.findUser(ctx, ref)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, ckan.NotAuthorized("Not allowed to retrieve collaborators")
	}
	if u.State == StateDeleted {
		return []map[string]any{}, nil
	}
	capacity, cerr := s.st.capacityFilter(r.Data)
	if cerr != nil {
		return nil, cerr
	}
	type row struct {
		id string
		m  Collaborator
	}
	var rows []row
	s.st.view(func() {
		for _, d := range s.st.datasets {
			for _, m := range d.Collaborators {
				if m.UserID == u.ID && (capacity == "" || m.Capacity == capacity) {
					rows = append(rows, row{d.ID, m})
				}
			}
		}
	})
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].m.Modified.Equal(rows[j].m.Modified) {
			return rows[i].m.Modified.Before(rows[j].m.Modified)
		}
		return rows[i].id < rows[j].id
	})
	out := make([]map[string]any, len(rows))
	for i, x := range rows {
		out[i] = map[string]any{"package_id": x.id, "capacity": x.m.Capacity, "modified": ckanTime(x.m.Modified)}
	}
	return out, nil
}
