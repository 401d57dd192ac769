package catalog

import (
	"context"
	"crypto/sha1"
	"fmt"
	"slices"
	"sort"
	"strings"

	"toxgate/catalog/ckan"
)

// Groups are CKAN's groups: collections of datasets across organizations,
// with their own members (admin, editor, member). They are stored like
// organizations (the same collection, record and write path, with Type
// "group"), share the organizations' name space as in CKAN's one group
// table, and datasets name theirs in Dataset.Groups.

func init() {
	register("group_list", true, "Groups (all_fields, sort, limit, offset, q, groups).", groupList)
	register("group_show", true, "One group (include_datasets, include_users, include_extras).", groupShow)
	register("group_create", false, "Create a group; the caller becomes its admin (sysadmins; every user with catalog.auth.user_create_groups).", groupCreate)
	register("group_update", false, "Replace a group's fields.", groupUpdate)
	register("group_patch", false, "Change the given fields of a group.", groupPatch)
	register("group_delete", false, "Delete a group (its datasets stay, out of the group).", groupDelete)
	register("group_purge", false, "Remove a group for good (sysadmins).", groupPurge)
	register("group_member_create", false, "Add a user to a group or change their role.", groupMemberCreate)
	register("group_member_delete", false, "Remove a user from a group.", groupMemberDelete)
	register("group_list_authz", true, "Groups the caller may add datasets to (am_member, include_dataset_count).", groupListAuthz)
	register("member_create", false, "Put a dataset (object_type package) or user in a group, or a user in an organization.", memberCreateAction)
	register("member_delete", false, "Take a dataset or user out of a group, or a user out of an organization.", memberDeleteAction)
}

// groupKind says which of the two CKAN keeps in its group table an action
// works on: organizations or groups.
type groupKind struct{ org bool }

var (
	orgKind = groupKind{org: true}
	grpKind = groupKind{}
)

// word is "organization" or "group", as in action names and messages.
func (k groupKind) word() string {
	if k.org {
		return "organization"
	}
	return "group"
}

// plural is the list parameter of organization_list / group_list.
func (k groupKind) plural() string { return k.word() + "s" }

// storedType is Organization.Type for the kind.
func (k groupKind) storedType() string {
	if k.org {
		return ""
	}
	return "group"
}

// notFound is the member actions' message for an unknown id.
func (k groupKind) notFound() string {
	if k.org {
		return "Organization not found"
	}
	return "Group not found"
}

// isGroup reports whether o is a group rather than an organization.
func (o *Organization) isGroup() bool { return o.Type == "group" }

// typeName is CKAN's "type" of o.
func (o *Organization) typeName() string {
	if o.isGroup() {
		return "group"
	}
	return "organization"
}

// anyGroupRef reads "id" and finds the organization or group.
func (s *Service) anyGroupRef(r *Request) (*Organization, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	o := s.st.lookupAnyGroup(ref)
	if o == nil {
		return nil, ckan.NotFound("Group was not found.")
	}
	return o, nil
}

// listedIn reports whether d is listed among the datasets of the
// organization or group id for c: active, and for an organization readable
// by c (members see private ones), for a group public (CKAN lists a
// group's datasets without include_private).
func (st *readModel) listedIn(c Caller, id string, d *Dataset) bool {
	if d.State != StateActive {
		return false
	}
	if d.OwnerOrg == id {
		return st.canRead(c, d)
	}
	return !d.Private && slices.Contains(d.Groups, id)
}

// groupSummary is a group in a dataset dict.
type groupSummary struct {
	Description     string `json:"description"`
	DisplayName     string `json:"display_name"`
	ID              string `json:"id"`
	ImageDisplayURL string `json:"image_display_url"`
	Name            string `json:"name"`
	Title           string `json:"title"`
}

// groupSummaries are the active groups of d as package_show lists them,
// by display name. Callers hold a lock.
func (st *readModel) groupSummaries(d *Dataset) []any {
	out := []groupSummary{}
	for _, id := range d.Groups {
		g := st.groups[id]
		if g == nil || g.State != StateActive {
			continue
		}
		display := g.Title
		if strings.TrimSpace(display) == "" {
			display = g.Name
		}
		out = append(out, groupSummary{Description: g.Description, DisplayName: display, ID: g.ID,
			ImageDisplayURL: g.ImageURL, Name: g.Name, Title: g.Title})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DisplayName < out[j].DisplayName })
	list := make([]any, len(out))
	for i := range out {
		list[i] = out[i]
	}
	return list
}

// groupVocabFields adds to the search fields f of d its groups (names of
// active groups, field "groups") and its vocabulary tags (field
// vocab_<vocabulary name>), as CKAN indexes them, and returns the values
// that also go into the text field. Callers hold a lock.
func (st *readModel) groupVocabFields(d *Dataset, f map[string][]string) []string {
	var text []string
	for _, id := range d.Groups {
		if g := st.groups[id]; g != nil && g.State == StateActive {
			f["groups"] = append(f["groups"], g.Name)
			text = append(text, g.Name, g.Title)
		}
	}
	for _, t := range d.VocabTags {
		if v := st.vocabs[t.VocabularyID]; v != nil {
			f["vocab_"+v.Name] = append(f["vocab_"+v.Name], t.Name)
			text = append(text, t.Name)
		}
	}
	return text
}

// datasetGroups resolves the "groups" of a dataset dict ([{id or name}])
// to group ids with CKAN's rules: an unknown group is 404 "Group was not
// found."; adding the dataset to a group needs the manage_group
// permission there (any member role), else 403; a group left out is left
// only when the caller may read it (is a member), otherwise it is kept.
// Callers hold a lock.
func (st *readModel) datasetGroups(c Caller, data map[string]any, base *Dataset) ([]string, *ckan.Error) {
	dicts, derr := listOfDicts(data, "groups")
	if derr != nil {
		return nil, derr
	}
	var had []string
	if base != nil {
		had = base.Groups
	}
	var out []string
	seen := map[string]bool{}
	for _, gd := range dicts {
		if capacity, _ := str(gd["capacity"]); capacity == "organization" {
			continue
		}
		ref, _ := str(gd["id"])
		if ref == "" {
			ref, _ = str(gd["name"])
		}
		if ref == "" {
			continue
		}
		g := st.lookupGroup(grpKind, ref)
		if g == nil || (g.State != StateActive && !slices.Contains(had, g.ID)) {
			return nil, ckan.NotFound("Group was not found.")
		}
		if seen[g.ID] {
			continue
		}
		seen[g.ID] = true
		if !slices.Contains(had, g.ID) && !st.mayJoinGroup(c, g.ID) {
			return nil, denied(c, "edit these groups")
		}
		out = append(out, g.ID)
	}
	for _, id := range had {
		if !seen[id] && !st.mayLeaveGroup(c, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// groupInputs is d's groups as a package_update data dict holds them.
func groupInputs(d *Dataset) []any {
	out := make([]any, len(d.Groups))
	for i, id := range d.Groups {
		out[i] = map[string]any{"id": id}
	}
	return out
}

func groupList(ctx context.Context, s *Service, r *Request) (any, error) {
	return listGroups(ctx, s, r, grpKind)
}

func groupShow(ctx context.Context, s *Service, r *Request) (any, error) {
	g, err := s.groupRef(r, grpKind)
	if err != nil {
		return nil, err
	}
	return s.showGroup(ctx, r, g)
}

func groupCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	if t, _ := str(r.Data["type"]); t == "organization" {
		return nil, ckan.FieldError("type", "Cannot create a group of type organization: use organization_create")
	}
	return createGroup(ctx, s, r, grpKind)
}

func groupUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.orgReplace(ctx, r, grpKind, func(*Organization) map[string]any { return r.Data })
}

func groupPatch(ctx context.Context, s *Service, r *Request) (any, error) {
	return s.orgReplace(ctx, r, grpKind, patchedGroupInput(r))
}

func groupDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	g, err := s.groupRef(r, grpKind)
	if err != nil {
		return nil, err
	}
	_, err = s.mutateOrg(ctx, g.ID, func(base *Organization) (*Organization, error) {
		n := base.clone()
		n.State = StateDeleted
		return n, nil
	})
	return nil, err
}

func groupPurge(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	var g *Organization
	var members []string
	s.st.view(func() {
		g = s.st.lookupGroup(grpKind, ref)
		if g != nil {
			for _, d := range s.st.datasets {
				if slices.Contains(d.Groups, g.ID) {
					members = append(members, d.ID)
				}
			}
		}
	})
	if g == nil {
		return nil, ckan.NotFound("Group was not found")
	}
	// the memberships go first, so that a purge cut short leaves a group
	// that can be purged again
	for _, id := range members {
		if err := s.setDatasetGroup(ctx, id, g.ID, false); err != nil {
			return nil, err
		}
	}
	return nil, s.purgeOrg(ctx, g.ID)
}

// setDatasetGroup puts dataset id in group groupID (in true) or takes it
// out, through the dataset write path.
func (s *Service) setDatasetGroup(ctx context.Context, id, groupID string, in bool) error {
	_, err := s.mutateDataset(ctx, id, func(base *Dataset) (*Dataset, error) {
		n := base.clone()
		has := slices.Contains(n.Groups, groupID)
		switch {
		case in && !has:
			n.Groups = append(n.Groups, groupID)
		case !in && has:
			n.Groups = slices.DeleteFunc(n.Groups, func(g string) bool { return g == groupID })
		}
		return n, nil
	})
	return err
}

func groupMemberCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	return userMemberCreate(ctx, s, r, grpKind)
}

func groupMemberDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	return userMemberDelete(ctx, s, r, grpKind)
}

func groupListAuthz(_ context.Context, s *Service, r *Request) (any, error) {
	c := r.Caller
	out := []map[string]any{}
	if c.Anonymous() {
		return out, nil
	}
	amMember, _ := ckan.AsBool(r.Data["am_member"])
	withCount, _ := ckan.AsBool(r.Data["include_dataset_count"])
	withMembers, _ := ckan.AsBool(r.Data["include_member_count"])
	s.st.view(func() {
		for _, g := range s.st.groups {
			if g.State != StateActive {
				continue
			}
			if amMember && !roleGrants(g.role(c.UserID), PermManageGroup) || !s.st.mayJoinGroup(c, g.ID) {
				continue
			}
			m := orgDict(g, s.st.packageCount(c, g.ID))
			delete(m, "num_followers")
			if !withCount {
				delete(m, "package_count")
			}
			if withMembers {
				m["member_count"] = len(g.Members)
			}
			out = append(out, m)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i]["display_name"].(string) < out[j]["display_name"].(string) })
	return out, nil
}

// memberRef is what member_create and member_delete act on.
type memberRef struct {
	group   *Organization
	dataset *Dataset
	user    *User
}

// memberTargetAny reads member_create's id, object and object_type and
// finds both (the caller's right is memberAuth's).
func (s *Service) memberTargetAny(ctx context.Context, r *Request, keys ...string) (memberRef, error) {
	var ref memberRef
	errs := map[string]any{}
	vals := map[string]string{}
	for _, k := range keys {
		vals[k], _ = str(r.Data[k])
		if vals[k] == "" {
			errs[k] = []string{ckan.MsgMissing}
		}
	}
	if len(errs) > 0 {
		return ref, ckan.Validation(errs)
	}
	objType := vals["object_type"]
	s.st.view(func() {
		ref.group = s.st.groupByAnyName(vals["id"])
		if objType == "package" {
			ref.dataset = s.st.dataset(vals["object"])
		}
	})
	if ref.group == nil {
		return ref, ckan.NotFound("Group was not found.")
	}
	switch objType {
	case "package":
		if ref.dataset == nil {
			return ref, ckan.NotFound("Package was not found.")
		}
		if !ref.group.isGroup() {
			return ref, ckan.ValidationMessage("A dataset belongs to an organization through its owner_org: use package_patch")
		}
	case "user":
		u, err := s.c.findUser(ctx, vals["object"])
		if err != nil {
			return ref, err
		}
		if u == nil || u.State == StateDeleted {
			return ref, ckan.NotFound("User was not found.")
		}
		ref.user = u
	default:
		return ref, ckan.ValidationMessage(fmt.Sprintf("%s isn't a valid model", titleWord(objType)))
	}
	return ref, nil
}

// titleWord is Python's str.title() of a one-word ASCII string.
func titleWord(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// memberID is the stable id of a dataset's membership of a group.
func memberID(groupID, objectID string) string {
	h := sha1.Sum([]byte("toxgate-member:" + groupID + ":" + objectID))
	var b [16]byte
	copy(b[:], h[:16])
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func memberCreateAction(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, err := s.memberTargetAny(ctx, r, "id", "object", "object_type", "capacity")
	if err != nil {
		return nil, err
	}
	capacity, _ := str(r.Data["capacity"])
	if ref.user != nil {
		return s.putUserMember(ctx, r, ref.group, ref.user, capacity)
	}
	if err := s.setDatasetGroup(ctx, ref.dataset.ID, ref.group.ID, true); err != nil {
		return nil, err
	}
	return map[string]any{"id": memberID(ref.group.ID, ref.dataset.ID), "table_name": "package", "table_id": ref.dataset.ID,
		"capacity": capacity, "group_id": ref.group.ID, "state": StateActive}, nil
}

func memberDeleteAction(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, err := s.memberTargetAny(ctx, r, "id", "object", "object_type")
	if err != nil {
		return nil, err
	}
	if ref.user != nil {
		return nil, s.dropUserMember(ctx, ref.group, ref.user)
	}
	return nil, s.setDatasetGroup(ctx, ref.dataset.ID, ref.group.ID, false)
}
