package catalog

import (
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"toxgate/catalog/ckan"
)

// Name rules shared by datasets and organizations.
const (
	nameMin = 2
	nameMax = 100
)

var (
	nameRe  = regexp.MustCompile(`^[a-z0-9_-]*$`)
	uuidRe  = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	emailRe = regexp.MustCompile("^[\\w.!#$%&'*+/=?^`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")
)

// nameErrors runs CKAN's name_validator; withLength adds the messages of
// package_name_validator's own length checks (datasets only).
func nameErrors(v string, withLength bool) []string {
	var errs []string
	switch {
	case v == "new" || v == "edit" || v == "search":
		errs = append(errs, "That name cannot be used")
	case len(v) < nameMin:
		errs = append(errs, fmt.Sprintf("Must be at least %d characters long", nameMin))
	case len(v) > nameMax:
		errs = append(errs, fmt.Sprintf("Name must be a maximum of %d characters long", nameMax))
	case !nameRe.MatchString(v):
		errs = append(errs, "Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_")
	}
	if withLength {
		if len(v) < nameMin {
			errs = append(errs, fmt.Sprintf("Name %q length is less than minimum %d", v, nameMin))
		}
		if len(v) > nameMax {
			errs = append(errs, fmt.Sprintf("Name %q length is more than maximum %d", v, nameMax))
		}
	}
	return errs
}

// isUUID reports whether s parses as a UUID.
func isUUID(s string) bool { return uuidRe.MatchString(s) }

// canonicalUUID lowercases s and adds the hyphens.
func canonicalUUID(s string) string {
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// str reads a string-ish value (numbers and booleans formatted, nil → "").
func str(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "True", true
		}
		return "False", true
	case float64, int, int64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// optStr returns a pointer to data[key] as a string, or nil when absent or null.
func optStr(data map[string]any, key string) *string {
	v, ok := data[key]
	if !ok || v == nil {
		return nil
	}
	s, ok := str(v)
	if !ok {
		b, _ := json.Marshal(normalize(v))
		s = string(b)
	}
	return &s
}

// normalize turns decoded JSON into values MongoDB stores faithfully
// (json.Number becomes int64 or float64).
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// listOfDicts reads data[key] as a list of dicts; a list of anything else is
// CKAN's DataError.
func listOfDicts(data map[string]any, key string) ([]map[string]any, *ckan.Error) {
	v, ok := data[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		if s, isStr := v.(string); isStr && strings.HasPrefix(strings.TrimSpace(s), "[") {
			var decoded []any
			if json.Unmarshal([]byte(s), &decoded) == nil {
				list = decoded
				ok = true
			}
		}
	}
	if !ok {
		return nil, ckan.DataError(fmt.Sprintf("Only lists of dicts can be placed against subschema ('%s',), not %s", key, pyType(v)), data)
	}
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, ckan.DataError(fmt.Sprintf("Only lists of dicts can be placed against subschema ('%s',), not <class 'list'>", key), data)
		}
		out = append(out, m)
	}
	return out, nil
}

func pyType(v any) string {
	switch v.(type) {
	case string:
		return "<class 'str'>"
	case map[string]any:
		return "<class 'dict'>"
	case bool:
		return "<class 'bool'>"
	case json.Number, float64, int:
		return "<class 'int'>"
	}
	return "<class 'list'>"
}

// tagErrors checks one tag name.
func tagErrors(t string) []string {
	var errs []string
	n := len([]rune(t))
	if n < 2 {
		errs = append(errs, fmt.Sprintf("Tag %q length is less than minimum 2", t))
	}
	if n > 100 {
		errs = append(errs, fmt.Sprintf("Tag %q length is more than maximum 100", t))
	}
	for _, r := range t {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == ' ' || r == '-' || r == '.') {
			errs = append(errs, fmt.Sprintf("Tag %q must be alphanumeric characters or symbols: -_.", t))
			break
		}
	}
	return errs
}

// coreFields are the dataset schema's own keys; extras may not reuse them.
var coreFields = map[string]bool{
	"id": true, "name": true, "title": true, "author": true, "author_email": true, "maintainer": true,
	"maintainer_email": true, "license_id": true, "notes": true, "url": true, "version": true, "state": true,
	"type": true, "resources": true, "tags": true, "extras": true, "groups": true, "owner_org": true,
	"private": true, "metadata_created": true, "metadata_modified": true, "creator_user_id": true,
}

// datasetInput is the outcome of validating a dataset dict.
type datasetInput struct {
	d        *Dataset
	ownerOrg *Organization
}

// buildDataset validates data as package_create (base nil) or package_update
// (base is the stored dataset) and returns the dataset to store. The action
// was authorized (authTable); what depends on the fields themselves (the
// id, owner_org, groups) asks authz.go's predicates, as CKAN's validators
// ask its authz. Callers hold a read lock.
func (st *readModel) buildDataset(c Caller, data map[string]any, base *Dataset, at time.Time, mayState bool) (datasetInput, *ckan.Error) {
	errs := map[string]any{}
	create := base == nil
	d := &Dataset{Type: "dataset", State: StateActive, MetadataCreated: at, MetadataModified: at, CreatorUserID: c.UserID}
	if !create {
		d.ID, d.Name, d.OwnerOrg, d.Private, d.State = base.ID, base.Name, base.OwnerOrg, base.Private, base.State
		d.Type, d.CreatorUserID, d.MetadataCreated, d.Rev = base.Type, base.CreatorUserID, base.MetadataCreated, base.Rev
		d.Collaborators = base.Collaborators
	}

	// id: sysadmins only on create, a UUID not yet used.
	if create {
		if v, ok := data["id"]; ok && v != nil && v != "" {
			id, _ := str(v)
			switch {
			case !choosesIDs(c):
				errs["id"] = []string{"The input field id was not expected."}
			case !isUUID(id):
				errs["id"] = []string{"Invalid id"}
			default:
				id = canonicalUUID(id)
				if st.datasets[id] != nil {
					errs["id"] = []string{"Dataset id already exists"}
				}
				d.ID = id
			}
		}
		if d.ID == "" {
			d.ID = newID()
		}
	}

	// name
	if v, ok := data["name"]; ok || create {
		name, _ := str(v)
		if name == "" {
			if create || ok {
				errs["name"] = []string{ckan.MsgMissing}
			}
		} else {
			msgs := append(nameErrors(name, true), reservedNameErrors(c, name, base)...)
			if other := st.dataset(name); other != nil && other.ID != d.ID && other.Name == name && other.State != StateDeleted {
				msgs = append([]string{"That URL is already in use."}, msgs...)
			}
			if len(msgs) > 0 {
				errs["name"] = msgs
			}
			d.Name = name
		}
	}

	// title defaults to the name
	if t, _ := str(data["title"]); t != "" {
		d.Title = t
	} else {
		d.Title = d.Name
	}
	d.Author, d.AuthorEmail = optStr(data, "author"), optStr(data, "author_email")
	d.Maintainer, d.MaintainerEmail = optStr(data, "maintainer"), optStr(data, "maintainer_email")
	d.Notes, d.URL, d.Version, d.LicenseID = optStr(data, "notes"), optStr(data, "url"), optStr(data, "version"), optStr(data, "license_id")
	for _, k := range []string{"author_email", "maintainer_email"} {
		if p := optStr(data, k); p != nil && *p != "" && !emailRe.MatchString(*p) {
			errs[k] = []string{fmt.Sprintf("Email %s is not a valid format", *p)}
		}
	}
	if d.Version != nil && len(*d.Version) > 100 {
		errs["version"] = []string{"Version must be a maximum of 100 characters long"}
	}

	// owner_org, by id or name: required unless create_unowned_dataset;
	// whether c may put the dataset there is ownerOrgRefusal's (authz.go)
	var owner *Organization
	if v, ok := data["owner_org"]; ok || create {
		ref, _ := str(v)
		switch {
		case ref == "" && !st.auth.CreateUnownedDataset:
			errs["owner_org"] = []string{"An organization must be provided"}
		case ref == "":
			if msg := st.ownerOrgRefusal(c, base, nil); msg != "" {
				errs["owner_org"] = []string{msg}
			} else {
				d.OwnerOrg = ""
			}
		default:
			owner = st.org(ref)
			if owner == nil || owner.State == StateDeleted {
				errs["owner_org"] = []string{"Organization does not exist"}
				owner = nil
			} else if msg := st.ownerOrgRefusal(c, base, owner); msg != "" {
				errs["owner_org"] = []string{msg}
			} else {
				d.OwnerOrg = owner.ID
			}
		}
	} else if d.OwnerOrg != "" {
		owner = st.orgs[d.OwnerOrg]
	}

	if v, ok := data["private"]; ok {
		d.Private = ckan.SchemaBool(v)
	}
	if d.Private && d.OwnerOrg == "" && errs["owner_org"] == nil {
		errs["private"] = []string{"Datasets with no organization can't be private."}
	}
	if v, ok := data["state"]; ok && mayState {
		if s, _ := str(v); s == StateActive || s == StateDraft || s == StateDeleted {
			d.State = s
		}
	}
	if create {
		if t, _ := str(data["type"]); t != "" {
			d.Type = t
		}
	}

	// tags: [{"name"}] or tag_string "a,b"
	tagDicts, derr := listOfDicts(data, "tags")
	if derr != nil {
		return datasetInput{}, derr
	}
	seen := map[string]bool{}
	var tagMsgs []string
	addTag := func(t string) {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			return
		}
		seen[t] = true
		tagMsgs = append(tagMsgs, tagErrors(t)...)
		d.Tags = append(d.Tags, t)
	}
	for _, td := range tagDicts {
		n, _ := str(td["name"])
		if n == "" {
			tagMsgs = append(tagMsgs, ckan.MsgMissing)
			continue
		}
		if vocab, _ := str(td["vocabulary_id"]); vocab != "" {
			tagMsgs = append(tagMsgs, st.addVocabTag(d, strings.TrimSpace(n), vocab)...)
			continue
		}
		addTag(n)
	}
	if ts, _ := str(data["tag_string"]); ts != "" && len(tagDicts) == 0 {
		for _, t := range strings.Split(ts, ",") {
			addTag(t)
		}
	}
	if len(tagMsgs) > 0 {
		errs["tags"] = tagMsgs
	}
	sort.Strings(d.Tags)
	sortVocabTags(d.VocabTags)

	// extras
	extraDicts, derr := listOfDicts(data, "extras")
	if derr != nil {
		return datasetInput{}, derr
	}
	extraErrs := make([]any, len(extraDicts))
	bad := false
	keys := map[string]bool{}
	var dup []string
	for i, e := range extraDicts {
		extraErrs[i] = map[string]any{}
		if del := e["deleted"]; del != nil && ckan.SchemaBool(del) {
			continue
		}
		k, _ := str(e["key"])
		val, ok := str(e["value"])
		if !ok && e["value"] != nil {
			b, _ := json.Marshal(normalize(e["value"]))
			val = string(b)
		}
		switch {
		case k == "":
			extraErrs[i] = map[string]any{"key": []string{ckan.MsgMissing}}
			bad = true
		case coreFields[k]:
			extraErrs[i] = map[string]any{"key": []string{"There is a schema field with the same name"}}
			bad = true
		case keys[k]:
			dup = append(dup, k)
		default:
			keys[k] = true
			d.Extras = append(d.Extras, Extra{Key: k, Value: val})
		}
	}
	if bad {
		errs["extras"] = extraErrs
	}
	if len(dup) > 0 {
		msgs := make([]string, len(dup))
		for i, k := range dup {
			msgs[i] = fmt.Sprintf("Duplicate key %q", k)
		}
		errs["extras_validation"] = msgs
	}
	sortExtras(d.Extras)

	// groups: [{id or name}], with CKAN's membership rules (groups.go)
	if groups, gerr := st.datasetGroups(c, data, base); gerr != nil {
		return datasetInput{}, gerr
	} else {
		d.Groups = groups
	}

	// resources: matched by id; new ones created; order sets position.
	resDicts, derr := listOfDicts(data, "resources")
	if derr != nil {
		return datasetInput{}, derr
	}
	prev := map[string]*Resource{}
	if base != nil {
		for i := range base.Resources {
			prev[base.Resources[i].ID] = &base.Resources[i]
		}
	}
	resErrs := make([]any, len(resDicts))
	badRes := false
	used := map[string]bool{}
	for i, rd := range resDicts {
		var old *Resource
		if id, _ := str(rd["id"]); id != "" {
			old = prev[id]
		}
		r, rerr := st.buildResource(rd, old, d.ID, at)
		if rerr == nil && used[r.ID] {
			rerr = map[string]any{"id": []string{"Resource id already exists."}}
		}
		if rerr != nil {
			resErrs[i] = rerr
			badRes = true
			continue
		}
		used[r.ID] = true
		resErrs[i] = map[string]any{}
		d.Resources = append(d.Resources, r)
	}
	if badRes {
		errs["resources"] = resErrs
	}
	// resources left out become deleted (already deleted ones are dropped)
	if base != nil {
		for _, r := range base.Resources {
			if !used[r.ID] && r.State != StateDeleted {
				r.State = StateDeleted
				d.Resources = append(d.Resources, r)
			}
		}
	}

	if len(errs) > 0 {
		return datasetInput{}, ckan.Validation(errs)
	}
	return datasetInput{d: d, ownerOrg: owner}, nil
}

// resourceKeys are the resource fields CKAN defines; other keys are extras.
var resourceKeys = map[string]bool{
	"id": true, "package_id": true, "url": true, "name": true, "description": true, "format": true, "hash": true,
	"mimetype": true, "mimetype_inner": true, "size": true, "created": true, "last_modified": true,
	"metadata_modified": true, "cache_url": true, "cache_last_updated": true, "resource_type": true,
	"url_type": true, "state": true, "position": true, "upload": true, "tracking_summary": true,
	"clear_upload": true,
}

// buildResource validates one resource dict; old is the stored resource it
// replaces (nil for a new one). The error is the resource's error dict.
// Callers hold a read lock.
func (st *readModel) buildResource(m map[string]any, old *Resource, datasetID string, at time.Time) (Resource, map[string]any) {
	errs := map[string]any{}
	stamp := ckanTime(at)
	r := Resource{State: StateActive, Created: stamp, MetadataModified: stamp}
	if old != nil {
		r.ID, r.Created = old.ID, old.Created
	} else if v, ok := m["id"]; ok && v != nil && v != "" {
		id, _ := str(v)
		if !isUUID(id) {
			errs["id"] = []string{"Invalid id"}
		} else {
			id = canonicalUUID(id)
			if owner, taken := st.resources[id]; taken && owner != datasetID {
				errs["id"] = []string{"Resource id already exists."}
			}
			r.ID = id
		}
	}
	if r.ID == "" {
		r.ID = newID()
	}
	r.URL, _ = str(m["url"])
	r.URL = strings.TrimSpace(r.URL)
	r.Name, r.Description = optStr(m, "name"), optStr(m, "description")
	r.Format, _ = str(m["format"])
	r.Hash, _ = str(m["hash"])
	r.Mimetype, r.MimetypeInner = optStr(m, "mimetype"), optStr(m, "mimetype_inner")
	r.CacheURL, r.ResourceType, r.URLType = optStr(m, "cache_url"), optStr(m, "resource_type"), optStr(m, "url_type")
	up, uploaded := m["upload"].(FileRef)
	if !uploaded {
		if v, given := m["upload"]; given && v != nil && v != "" {
			errs["upload"] = []string{"Send the file as a multipart/form-data field named upload"}
		}
	}
	if v, ok := m["size"]; ok && v != nil && v != "" && !uploaded {
		n, msg := ckan.AsInt(v)
		if msg != "" {
			errs["size"] = []string{msg}
		} else {
			size := int64(n)
			r.Size = &size
		}
	}
	for _, k := range []string{"created", "last_modified", "cache_last_updated"} {
		p := optStr(m, k)
		if p == nil || *p == "" {
			continue
		}
		t, ok := parseISO(*p)
		if !ok {
			errs[k] = []string{"Date format incorrect"}
			continue
		}
		s := ckanTime(t)
		switch k {
		case "created":
			if old == nil {
				r.Created = s
			}
		case "last_modified":
			r.LastModified = &s
		case "cache_last_updated":
			r.CacheLastUpdated = &s
		}
	}
	clear, _ := ckan.AsBool(m["clear_upload"])
	switch {
	case uploaded:
		t, size, stamp, hash, mt := "upload", up.Size, ckanTime(at), "sha256:"+up.SHA256, up.Mimetype
		r.URLType, r.URL, r.Size, r.LastModified, r.Hash, r.Mimetype, r.FileID = &t, up.Filename, &size, &stamp, hash, &mt, up.FileID
	case old != nil && old.FileID != "" && clear:
		// Back to a link: the file goes, and so do the facts about it.
		empty := ""
		r.URLType = &empty
		if r.URL == old.URL {
			r.URL = ""
		}
		if r.Hash == old.Hash {
			r.Hash = ""
		}
		if r.Size != nil && old.Size != nil && *r.Size == *old.Size {
			r.Size = nil
		}
		if r.Mimetype != nil && old.Mimetype != nil && *r.Mimetype == *old.Mimetype {
			r.Mimetype = nil
		}
	case old != nil && old.FileID != "" && r.URLType != nil && *r.URLType == "upload":
		// The dict still names the stored file (its download URL or its name).
		r.FileID, r.URL = old.FileID, old.URL
		if r.Size == nil {
			r.Size = old.Size
		}
		if r.Hash == "" {
			r.Hash = old.Hash
		}
		if r.Mimetype == nil {
			r.Mimetype = old.Mimetype
		}
		if r.LastModified == nil {
			r.LastModified = old.LastModified
		}
	}
	if r.Format == "" && r.URL != "" {
		r.Format = guessFormat(r.URL)
	}
	for k, v := range m {
		if !resourceKeys[k] {
			if r.Extras == nil {
				r.Extras = map[string]any{}
			}
			r.Extras[k] = normalize(v)
		}
	}
	if old != nil {
		if v, ok := old.Extras["datastore_active"]; ok {
			if _, given := m["datastore_active"]; !given {
				if r.Extras == nil {
					r.Extras = map[string]any{}
				}
				r.Extras["datastore_active"] = v
			}
		}
	}
	if len(errs) > 0 {
		return Resource{}, errs
	}
	return r, nil
}

// parseISO parses an ISO 8601 date or date-time, with or without offset.
func parseISO(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// guessFormat derives a format from the URL's file extension ("x.png" →
// "PNG"), as CKAN's if_empty_guess_format does from the mimetype.
func guessFormat(url string) string {
	if i := strings.IndexAny(url, "?#"); i >= 0 {
		url = url[:i]
	}
	ext := strings.ToLower(path.Ext(url))
	if ext == ".gz" { // a compressed file goes by the format inside, as CKAN's guess: x.csv.gz is CSV
		ext = strings.ToLower(path.Ext(strings.TrimSuffix(url, url[len(url)-3:])))
	}
	if ext == "" || mime.TypeByExtension(ext) == "" {
		return ""
	}
	return strings.ToUpper(strings.TrimPrefix(ext, "."))
}
