package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"toxgate/catalog/ckan"
)

func init() {
	register("organization_list", true, "Organizations (all_fields, sort, limit, offset, q).", organizationList)
	register("organization_show", true, "One organization (include_datasets, include_users).", organizationShow)
	register("organization_create", false, "Create an organization; the caller becomes its admin (sysadmins; every user with catalog.auth.user_create_organizations).", organizationCreate)
	register("organization_update", false, "Replace an organization's fields.", organizationUpdate)
	register("organization_patch", false, "Change the given fields of an organization.", organizationPatch)
	register("organization_delete", false, "Delete an organization (it must have no datasets).", organizationDelete)
	register("organization_member_create", false, "Add a user to an organization or change their role.", memberCreate)
	register("organization_member_delete", false, "Remove a user from an organization.", memberDelete)
	register("member_list", true, "Members of an organization as [id, type, capacity].", memberList)
	register("organization_list_for_user", true, "Organizations where a user holds a permission.", organizationListForUser)
	register("member_roles_list", true, "The organization roles.", memberRolesList)
}

// packageCount counts the active datasets of the organization or group
// orgID visible to c (see listedIn).
func (st *readModel) packageCount(c Caller, orgID string) int {
	n := 0
	for _, d := range st.datasets {
		if st.listedIn(c, orgID, d) {
			n++
		}
	}
	return n
}

func organizationList(ctx context.Context, s *Service, r *Request) (any, error) {
	return listGroups(ctx, s, r, orgKind)
}

// listGroups is organization_list and group_list.
func listGroups(_ context.Context, s *Service, r *Request, k groupKind) (any, error) {
	allFields, _ := ckan.AsBool(r.Data["all_fields"])
	sortSpec := strings.TrimSpace(ckan.String(r.Data, "sort"))
	if sortSpec == "" {
		sortSpec = "title asc"
	}
	if sortSpec == "packages" || sortSpec == "package_count" {
		sortSpec = "package_count desc"
	}
	f := strings.Fields(sortSpec)
	if len(f) > 2 || (len(f) == 2 && f[1] != "asc" && f[1] != "desc") || strings.Contains(sortSpec, ",") ||
		(f[0] != "name" && f[0] != "title" && f[0] != "package_count") {
		return nil, ckan.ValidationMessage(fmt.Sprintf("Cannot sort by field `%s`", f[0]))
	}
	desc := len(f) == 2 && f[1] == "desc"
	maxLimit := 1000
	if allFields {
		maxLimit = 25
	}
	limit, err := ckan.Natural(r.Data, "limit", maxLimit)
	if err != nil {
		return nil, err
	}
	offset, err := ckan.Natural(r.Data, "offset", 0)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(ckan.String(r.Data, "q"))
	var only map[string]bool
	if names := ckan.StringList(r.Data, k.plural()); len(names) > 0 {
		only = map[string]bool{}
		for _, n := range names {
			for _, p := range strings.Split(n, ",") {
				only[strings.TrimSpace(p)] = true
			}
		}
	}
	type row struct {
		o     *Organization
		count int
	}
	var rows []row
	s.st.view(func() {
		for _, o := range s.st.groupsOf(k) {
			if o.State != StateActive || (only != nil && !only[o.Name]) {
				continue
			}
			if q != "" && !strings.Contains(strings.ToLower(o.Name), q) && !strings.Contains(strings.ToLower(o.Title), q) && !strings.Contains(strings.ToLower(o.Description), q) {
				continue
			}
			rows = append(rows, row{o: o, count: s.st.packageCount(r.Caller, o.ID)})
		}
	})
	key := func(x row) string {
		if f[0] == "name" {
			return x.o.Name
		}
		return strings.ToLower(x.o.Title)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if f[0] == "package_count" && a.count != b.count {
			return (a.count < b.count) != desc
		}
		if ka, kb := key(a), key(b); ka != kb {
			return (ka < kb) != desc
		}
		return a.o.Name < b.o.Name
	})
	offset = min(offset, len(rows))
	rows = rows[offset:]
	if limit < len(rows) {
		rows = rows[:limit]
	}
	if !allFields {
		names := make([]string, len(rows))
		for i, x := range rows {
			names[i] = x.o.Name
		}
		return names, nil
	}
	out := make([]map[string]any, len(rows))
	for i, x := range rows {
		out[i] = orgDict(x.o, x.count)
	}
	return out, nil
}

// orgRef reads "id" and finds the organization (deleted ones included).
func (s *Service) orgRef(r *Request) (*Organization, error) {
	return s.groupRef(r, orgKind)
}

// groupRef reads "id" and finds the organization or group of kind k
// (deleted ones included).
func (s *Service) groupRef(r *Request, k groupKind) (*Organization, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	o := s.st.lookupGroupOf(k, ref)
	if o == nil {
		return nil, ckan.NotFound("Group was not found.")
	}
	return o, nil
}

func organizationShow(ctx context.Context, s *Service, r *Request) (any, error) {
	o, err := s.orgRef(r)
	if err != nil {
		return nil, err
	}
	return s.showGroup(ctx, r, o)
}

// showGroup is organization_show and group_show of o.
func (s *Service) showGroup(ctx context.Context, r *Request, o *Organization) (any, error) {
	includeDatasets, _ := ckan.AsBool(r.Data["include_datasets"])
	includeUsers := true
	if v, ok := r.Data["include_users"]; ok {
		includeUsers, _ = ckan.AsBool(v)
	}
	var m map[string]any
	var pkgs []*DatasetDict
	var members []Member
	s.st.view(func() {
		// the members are user details (ckan.auth.public_user_details)
		includeUsers = includeUsers && s.st.seesUserDetails(r.Caller)
		m = orgDict(o, s.st.packageCount(r.Caller, o.ID))
		if includeDatasets {
			var ds []*Dataset
			for _, d := range s.st.datasets {
				if s.st.listedIn(r.Caller, o.ID, d) {
					ds = append(ds, d)
				}
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
			for i, d := range ds {
				if i == 10 {
					break
				}
				pkgs = append(pkgs, s.st.datasetDict(d, r.SiteURL))
			}
		}
		members = append([]Member(nil), o.Members...)
	})
	extras := append([]Extra{}, o.Extras...)
	sortExtras(extras)
	m["extras"], m["tags"], m["groups"] = extras, []any{}, []any{}
	if includeDatasets {
		if pkgs == nil {
			pkgs = []*DatasetDict{}
		}
		m["packages"] = pkgs
	}
	if includeUsers {
		ids := make([]string, len(members))
		for i, mb := range members {
			ids[i] = mb.UserID
		}
		users, err := s.c.findUsers(ctx, ids)
		if err != nil {
			return nil, err
		}
		list := make([]map[string]any, 0, len(members))
		for _, mb := range members {
			if u := users[mb.UserID]; u != nil && u.State != StateDeleted {
				ud := userDict(u, 0)
				ud["capacity"] = mb.Capacity
				list = append(list, ud)
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i]["name"].(string) < list[j]["name"].(string) })
		m["users"] = list
	}
	return m, nil
}

// orgFields validates the editable organization fields into o.
func (st *readModel) orgFields(o *Organization, data map[string]any, create bool) *ckan.Error {
	errs := map[string]any{}
	if v, ok := data["name"]; ok || create {
		name, _ := str(v)
		if name == "" {
			errs["name"] = []string{ckan.MsgMissing}
		} else {
			msgs := nameErrors(name, false)
			if other := st.groupByAnyName(name); other != nil && other.ID != o.ID && other.Name == name {
				msgs = append(msgs, "Group name already exists in database")
			}
			if len(msgs) > 0 {
				errs["name"] = msgs
			}
			o.Name = name
		}
	}
	o.Title, _ = str(data["title"])
	o.Description, _ = str(data["description"])
	o.ImageURL, _ = str(data["image_url"])
	extras, derr := listOfDicts(data, "extras")
	if derr != nil {
		return derr
	}
	o.Extras = nil
	for _, e := range extras {
		k, _ := str(e["key"])
		v, _ := str(e["value"])
		if k != "" {
			o.Extras = append(o.Extras, Extra{Key: k, Value: v})
		}
	}
	if len(errs) > 0 {
		return ckan.Validation(errs)
	}
	return nil
}

func organizationCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	return createGroup(ctx, s, r, orgKind)
}

// createGroup is organization_create and group_create.
func createGroup(ctx context.Context, s *Service, r *Request, k groupKind) (any, error) {
	c := r.Caller
	o := &Organization{Type: k.storedType(), State: StateActive, Created: now(), Rev: 1}
	var verr *ckan.Error
	s.st.view(func() {
		verr = s.st.orgFields(o, r.Data, true)
		if v, ok := r.Data["id"]; ok && v != nil && v != "" && verr == nil {
			id, _ := str(v)
			switch {
			case !choosesIDs(c):
				verr = ckan.FieldError("id", "The input field id was not expected.")
			case !isUUID(id):
				verr = ckan.FieldError("id", "Invalid id")
			case s.st.anyGroup(canonicalUUID(id)) != nil:
				verr = ckan.FieldError("id", "Group id already exists")
			default:
				o.ID = canonicalUUID(id)
			}
		}
	})
	if verr != nil {
		return nil, verr
	}
	if o.ID == "" {
		o.ID = newID()
	}
	if c.UserID != "" {
		o.Members = append(o.Members, Member{ID: newID(), UserID: c.UserID, Capacity: RoleAdmin})
	}
	if users, derr := listOfDicts(r.Data, "users"); derr != nil {
		return nil, derr
	} else {
		for _, u := range users {
			name, _ := str(u["name"])
			if name == "" {
				name, _ = str(u["id"])
			}
			capacity, _ := str(u["capacity"])
			if capacity == "" {
				capacity = RoleMember
			}
			usr, err := s.c.findUser(ctx, name)
			if err != nil {
				return nil, err
			}
			if usr == nil || rolePerms[capacity] == nil || usr.ID == c.UserID {
				continue
			}
			o.Members = append(o.Members, Member{ID: newID(), UserID: usr.ID, Capacity: capacity})
		}
	}
	if err := s.insertOrg(ctx, o); err != nil {
		return nil, err
	}
	r.Data = map[string]any{"id": o.ID}
	return s.showGroup(ctx, r, o)
}

func organizationUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.orgReplace(ctx, r, orgKind, func(*Organization) map[string]any { return r.Data })
}

func organizationPatch(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.orgReplace(ctx, r, orgKind, patchedGroupInput(r))
}

// patchedGroupInput is the data dict of a patch: the stored fields, then
// the request's.
func patchedGroupInput(r *Request) func(base *Organization) map[string]any {
	return func(base *Organization) map[string]any {
		m := map[string]any{"name": base.Name, "title": base.Title, "description": base.Description, "image_url": base.ImageURL}
		extras := make([]any, len(base.Extras))
		for i, e := range base.Extras {
			extras[i] = map[string]any{"key": e.Key, "value": e.Value}
		}
		m["extras"] = extras
		for k, v := range r.Data {
			m[k] = v
		}
		return m
	}
}

// orgReplace writes the fields input builds from the stored organization
// or group (its admins may: authOrgAdmin).
func (s *Service) orgReplace(ctx context.Context, r *Request, k groupKind, input func(*Organization) map[string]any) (any, error) {
	o, err := s.groupRef(r, k)
	if err != nil {
		return nil, err
	}
	if _, err := s.mutateOrg(ctx, o.ID, func(base *Organization) (*Organization, error) {
		n := base.clone()
		var verr *ckan.Error
		s.st.view(func() {
			verr = s.st.orgFields(n, input(base), false)
		})
		if verr != nil {
			return nil, verr
		}
		return n, nil
	}); err != nil {
		return nil, err
	}
	r.Data = map[string]any{"id": o.ID}
	o = s.st.cachedGroup(o.ID)
	return s.showGroup(ctx, r, o)
}

func organizationDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	o, err := s.orgRef(r)
	if err != nil {
		return nil, err
	}
	var has bool
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if d.OwnerOrg == o.ID && d.State != StateDeleted {
				has = true
				break
			}
		}
	})
	if has {
		return nil, ckan.ValidationMessage("Organization cannot be deleted while it still has datasets")
	}
	_, err = s.mutateOrg(ctx, o.ID, func(base *Organization) (*Organization, error) {
		n := base.clone()
		n.State = StateDeleted
		return n, nil
	})
	return nil, err
}

// memberTarget resolves the organization or group and the user of a user
// member action (its admins may call it: userMemberAuth).
func (s *Service) memberTarget(ctx context.Context, r *Request, k groupKind) (*Organization, *User, error) {
	ref, username, err := memberArgs(r.Data)
	if err != nil {
		return nil, nil, err
	}
	o := s.st.lookupGroupOf(k, ref)
	if o == nil {
		return nil, nil, ckan.NotFound(k.notFound())
	}
	u, err := s.c.findUser(ctx, username)
	if err != nil {
		return nil, nil, err
	}
	if u == nil || u.State == StateDeleted {
		return nil, nil, ckan.ValidationMessage(fmt.Sprintf("User %s does not exist.", username))
	}
	return o, u, nil
}

func memberCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	return userMemberCreate(ctx, s, r, orgKind)
}

// userMemberCreate is organization_member_create and group_member_create.
func userMemberCreate(ctx context.Context, s *Service, r *Request, k groupKind) (any, error) {
	role, _ := str(r.Data["role"])
	if role == "" {
		role, _ = str(r.Data["capacity"])
	}
	o, u, err := s.memberTarget(ctx, r, k)
	if err != nil {
		return nil, err
	}
	return s.putUserMember(ctx, r, o, u, role)
}

// putUserMember gives user u the role in o (an organization or group).
func (s *Service) putUserMember(ctx context.Context, r *Request, o *Organization, u *User, role string) (any, error) {
	if rolePerms[role] == nil {
		return nil, ckan.ValidationMessage("role does not exist.")
	}
	if revokesOwnAdmin(r.Caller, o, u, role) {
		return nil, ckan.NotAuthorized(fmt.Sprintf("User %s not authorized to edit %s %s: Administrators cannot revoke their own admin status", r.Caller.Name, o.typeName(), o.ID))
	}
	var member Member
	next, err := s.mutateOrg(ctx, o.ID, func(base *Organization) (*Organization, error) {
		n := base.clone()
		for i := range n.Members {
			if n.Members[i].UserID == u.ID {
				n.Members[i].Capacity = role
				member = n.Members[i]
				return n, nil
			}
		}
		member = Member{ID: newID(), UserID: u.ID, Capacity: role}
		n.Members = append(n.Members, member)
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": member.ID, "table_name": "user", "table_id": u.ID, "capacity": member.Capacity, "group_id": next.ID, "state": StateActive}, nil
}

func memberDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	return userMemberDelete(ctx, s, r, orgKind)
}

// userMemberDelete is organization_member_delete and group_member_delete.
func userMemberDelete(ctx context.Context, s *Service, r *Request, k groupKind) (any, error) {
	o, u, err := s.memberTarget(ctx, r, k)
	if err != nil {
		return nil, err
	}
	return nil, s.dropUserMember(ctx, o, u)
}

// dropUserMember removes user u from o.
func (s *Service) dropUserMember(ctx context.Context, o *Organization, u *User) error {
	_, err := s.mutateOrg(ctx, o.ID, func(base *Organization) (*Organization, error) {
		n := base.clone()
		kept := n.Members[:0]
		for _, m := range n.Members {
			if m.UserID != u.ID {
				kept = append(kept, m)
			}
		}
		n.Members = kept
		return n, nil
	})
	return err
}

func memberList(_ context.Context, s *Service, r *Request) (any, error) {
	o, err := s.anyGroupRef(r)
	if err != nil {
		return nil, err
	}
	objectType, _ := str(r.Data["object_type"])
	capacity, _ := str(r.Data["capacity"])
	out := [][]string{}
	return viewed2(s.st, func() (any, error) {
		if objectType == "" || objectType == "user" {
			for _, m := range o.Members {
				if capacity == "" || capacity == m.Capacity {
					out = append(out, []string{m.UserID, "user", m.Capacity})
				}
			}
		}
		pkgCapacity := "organization"
		if o.isGroup() {
			pkgCapacity = "public"
		}
		if objectType == "" || objectType == "package" {
			if capacity == "" || capacity == pkgCapacity {
				var ids []string
				for _, d := range s.st.datasets {
					if s.st.listedIn(r.Caller, o.ID, d) {
						ids = append(ids, d.ID)
					}
				}
				sort.Strings(ids)
				for _, id := range ids {
					out = append(out, []string{id, "package", pkgCapacity})
				}
			}
		}
		return out, nil
	})
}

func organizationListForUser(ctx context.Context, s *Service, r *Request) (any, error) {
	who := r.Caller
	if ref, _ := str(r.Data["id"]); ref != "" && ref != r.Caller.UserID && ref != r.Caller.Name {
		u, err := s.c.findUser(ctx, ref)
		if err != nil {
			return nil, err
		}
		if u == nil {
			return nil, ckan.NotFound("User not found")
		}
		who = Caller{UserID: u.ID, Name: u.Name, Sysadmin: u.Sysadmin}
	}
	if who.Anonymous() {
		return []any{}, nil
	}
	perm, _ := str(r.Data["permission"])
	if perm == "" {
		perm = PermManageGroup
	}
	var list []map[string]any
	s.st.view(func() {
		for _, o := range s.st.orgs {
			if o.State != StateActive {
				continue
			}
			role := o.role(who.UserID)
			if !s.st.hasPerm(who, o.ID, perm) {
				continue
			}
			// counted with the caller's permissions, not those of the user asked about
			m := orgDict(o, s.st.packageCount(r.Caller, o.ID))
			if who.Sysadmin && role == "" {
				role = RoleAdmin
			}
			m["capacity"] = role
			list = append(list, m)
		}
	})
	sort.Slice(list, func(i, j int) bool { return list[i]["name"].(string) < list[j]["name"].(string) })
	if list == nil {
		list = []map[string]any{}
	}
	return list, nil
}

func memberRolesList(_ context.Context, _ *Service, r *Request) (any, error) {
	if t, _ := str(r.Data["group_type"]); t == "group" { // CKAN offers groups no editors
		return []map[string]string{{"text": "Admin", "value": "admin"}, {"text": "Member", "value": "member"}}, nil
	}
	return []map[string]string{{"text": "Admin", "value": "admin"}, {"text": "Editor", "value": "editor"}, {"text": "Member", "value": "member"}}, nil
}
