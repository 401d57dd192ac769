package catalog

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"toxgate/catalog/ckan"
)

// ckanTime formats t as CKAN does: naive UTC isoformat, microseconds only
// when non-zero.
func ckanTime(t time.Time) string { return ckan.Time(t) }

// now is the current time at BSON's millisecond precision, so what is
// returned equals what is stored.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// newID returns a random UUID4 string.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// nameUUID is a stable UUID5-style id derived from a name (tag ids).
func nameUUID(name string) string {
	h := sha1.Sum([]byte("toxgate-tag:" + name))
	var b [16]byte
	copy(b[:], h[:16])
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	s := hex.EncodeToString(b[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// tagDict is a tag inside a dataset dict.
type tagDict struct {
	DisplayName  string  `json:"display_name"`
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	State        string  `json:"state"`
	VocabularyID *string `json:"vocabulary_id"`
}

// orgSummary is the "organization" member of a dataset dict.
type orgSummary struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Title          string `json:"title"`
	Type           string `json:"type"`
	Description    string `json:"description"`
	ImageURL       string `json:"image_url"`
	Created        string `json:"created"`
	IsOrganization bool   `json:"is_organization"`
	ApprovalStatus string `json:"approval_status"`
	State          string `json:"state"`
}

// DatasetDict is the package_show dict.
type DatasetDict struct {
	Author                 *string          `json:"author"`
	AuthorEmail            *string          `json:"author_email"`
	CreatorUserID          string           `json:"creator_user_id"`
	ID                     string           `json:"id"`
	Isopen                 bool             `json:"isopen"`
	LicenseID              *string          `json:"license_id"`
	LicenseTitle           *string          `json:"license_title"`
	LicenseURL             string           `json:"license_url,omitempty"`
	Maintainer             *string          `json:"maintainer"`
	MaintainerEmail        *string          `json:"maintainer_email"`
	MetadataCreated        string           `json:"metadata_created"`
	MetadataModified       string           `json:"metadata_modified"`
	Name                   string           `json:"name"`
	Notes                  *string          `json:"notes"`
	NumResources           int              `json:"num_resources"`
	NumTags                int              `json:"num_tags"`
	Organization           *orgSummary      `json:"organization"`
	OwnerOrg               *string          `json:"owner_org"`
	Private                bool             `json:"private"`
	State                  string           `json:"state"`
	Title                  string           `json:"title"`
	Type                   string           `json:"type"`
	URL                    *string          `json:"url"`
	Version                *string          `json:"version"`
	Extras                 []Extra          `json:"extras"`
	Groups                 []any            `json:"groups"`
	RelationshipsAsObject  []any            `json:"relationships_as_object"`
	RelationshipsAsSubject []any            `json:"relationships_as_subject"`
	Resources              []map[string]any `json:"resources"`
	Tags                   []tagDict        `json:"tags"`
}

func (st *readModel) orgSummary(id string) *orgSummary {
	o := st.orgs[id]
	if o == nil {
		return nil
	}
	return &orgSummary{ID: o.ID, Name: o.Name, Title: o.Title, Type: "organization", Description: o.Description,
		ImageURL: o.ImageURL, Created: ckanTime(o.Created), IsOrganization: true, ApprovalStatus: "approved", State: o.State}
}

// datasetDict renders d as package_show does. Callers hold a lock.
func (st *readModel) datasetDict(d *Dataset, siteURL string) *DatasetDict {
	out := &DatasetDict{
		Author: d.Author, AuthorEmail: d.AuthorEmail, CreatorUserID: d.CreatorUserID, ID: d.ID,
		LicenseID: d.LicenseID, Maintainer: d.Maintainer, MaintainerEmail: d.MaintainerEmail,
		MetadataCreated: ckanTime(d.MetadataCreated), MetadataModified: ckanTime(d.MetadataModified),
		Name: d.Name, Notes: d.Notes, Private: d.Private, State: d.State, Title: d.Title, Type: d.Type,
		URL: d.URL, Version: d.Version, Groups: st.groupSummaries(d), RelationshipsAsObject: []any{}, RelationshipsAsSubject: []any{},
		Extras: append([]Extra{}, d.Extras...),
	}
	if d.LicenseID != nil {
		title := *d.LicenseID
		if l := licenseByID[*d.LicenseID]; l != nil {
			title = l.Title
			out.LicenseURL = l.URL
			out.Isopen = l.IsOKDCompliant
		}
		out.LicenseTitle = &title
	}
	if d.OwnerOrg != "" {
		owner := d.OwnerOrg
		out.OwnerOrg = &owner
		out.Organization = st.orgSummary(d.OwnerOrg)
	}
	res := d.activeResources()
	out.Resources = make([]map[string]any, len(res))
	for i := range res {
		out.Resources[i] = resourceDict(d, &res[i], i, siteURL)
	}
	out.NumResources = len(res)
	out.Tags = tagDicts(d)
	out.NumTags = len(out.Tags)
	return out
}

// resourceDict renders a resource at position pos.
func resourceDict(d *Dataset, r *Resource, pos int, siteURL string) map[string]any {
	m := make(map[string]any, 20+len(r.Extras))
	for k, v := range r.Extras {
		m[k] = v
	}
	url := r.URL
	if r.URLType != nil && *r.URLType == "upload" {
		file := url
		if i := strings.LastIndex(file, "/"); i >= 0 {
			file = file[i+1:]
		}
		url = strings.TrimSuffix(siteURL, "/") + "/dataset/" + d.ID + "/resource/" + r.ID + "/download/" + file
	} else if url != "" && !strings.Contains(url, "://") {
		url = "http://" + url
	}
	m["id"], m["package_id"], m["url"] = r.ID, d.ID, url
	m["name"], m["description"], m["format"], m["hash"] = r.Name, r.Description, r.Format, r.Hash
	m["mimetype"], m["mimetype_inner"], m["size"] = r.Mimetype, r.MimetypeInner, r.Size
	m["created"], m["last_modified"], m["metadata_modified"] = r.Created, r.LastModified, r.MetadataModified
	m["cache_url"], m["cache_last_updated"] = r.CacheURL, r.CacheLastUpdated
	m["resource_type"], m["url_type"], m["state"], m["position"] = r.ResourceType, r.URLType, r.State, pos
	if _, ok := m["datastore_active"]; !ok {
		// as CKAN's DataStore reports it: false until a table exists
		m["datastore_active"] = false
	}
	return m
}

// orgDict renders an organization as organization_list with all_fields
// does; packageCount is the number of datasets counted for the caller.
func orgDict(o *Organization, packageCount int) map[string]any {
	display := o.Title
	if strings.TrimSpace(display) == "" {
		display = o.Name
	}
	return map[string]any{
		"id": o.ID, "name": o.Name, "title": o.Title, "type": o.typeName(), "description": o.Description,
		"image_url": o.ImageURL, "image_display_url": o.ImageURL, "created": ckanTime(o.Created),
		"is_organization": !o.isGroup(), "approval_status": "approved", "state": o.State, "display_name": display,
		"package_count": packageCount, "num_followers": 0,
	}
}

// userDict renders a user as CKAN does for org member lists (no email).
func userDict(u *User, created int) map[string]any {
	return ckan.UserDict(ckan.User{ID: u.ID, Name: u.Name, Fullname: u.Fullname, About: u.About, Email: u.Email,
		State: u.State, Sysadmin: u.Sysadmin, Created: u.Created}, created)
}

// sortExtras orders extras by key.
func sortExtras(e []Extra) {
	sort.Slice(e, func(i, j int) bool { return e[i].Key < e[j].Key })
}
