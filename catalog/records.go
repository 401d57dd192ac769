// Package catalog is the catalog domain: CKAN's datasets, resources,
// organizations and memberships with CKAN's validation, authorization by org
// role, and package_search, stored in MongoDB (mongo-driver v2). It knows
// nothing of HTTP or go-plugin: a caller hands it an action name, the
// caller's identity and the parsed data dict (see catalog/ckan) and gets the
// result or a *ckan.Error.
//
// Reads are served from an in-memory copy of the catalog (and its search
// index) that is brought up to date before every request from a change
// marker in the store, so several plugin processes or gateways over the same
// database stay consistent: see Service.Sync.
package catalog

import (
	"time"

	"toxgate/plugins/contract"
)

// Caller is the identity an action runs as (the plugin contract's, as the
// gateway authenticated it); the zero value is anonymous.
type Caller = contract.Identity

// Dataset states.
const (
	StateActive  = "active"
	StateDraft   = "draft"
	StateDeleted = "deleted"
)

// Dataset is a stored dataset (CKAN package).
type Dataset struct {
	ID               string     `bson:"_id"`
	Name             string     `bson:"name"`
	Title            string     `bson:"title"`
	Author           *string    `bson:"author"`
	AuthorEmail      *string    `bson:"author_email"`
	Maintainer       *string    `bson:"maintainer"`
	MaintainerEmail  *string    `bson:"maintainer_email"`
	Notes            *string    `bson:"notes"`
	URL              *string    `bson:"url"`
	Version          *string    `bson:"version"`
	LicenseID        *string    `bson:"license_id"`
	CreatorUserID    string     `bson:"creator_user_id"`
	OwnerOrg         string     `bson:"owner_org"`
	State            string     `bson:"state"`
	Private          bool       `bson:"private"`
	Type             string     `bson:"type"`
	MetadataCreated  time.Time  `bson:"metadata_created"`
	MetadataModified time.Time  `bson:"metadata_modified"`
	Tags             []string   `bson:"tags"`
	Extras           []Extra    `bson:"extras"`
	Resources        []Resource `bson:"resources"`
	// Collaborators are the users given a capacity on this dataset alone
	// (package_collaborator_create); see collaborators.go.
	Collaborators []Collaborator `bson:"collaborators,omitempty"`
	// Rev is the revision, raised by every write and checked by the next
	// one (optimistic concurrency).
	Rev int64 `bson:"rev"`
	// VocabTags are the tags from tag vocabularies (vocab.go); Tags are
	// the free tags.
	VocabTags []DatasetTag `bson:"vocab_tags,omitempty"`
	// Groups are the ids of the groups the dataset is in (groups.go).
	Groups []string `bson:"groups,omitempty"`
}

// Extra is a free key/value pair of a dataset or organization.
type Extra struct {
	Key   string `bson:"key" json:"key"`
	Value string `bson:"value" json:"value"`
}

// Resource is a data item of a dataset. Keys CKAN does not define are kept
// in Extras and returned flat.
type Resource struct {
	ID               string         `bson:"id"`
	URL              string         `bson:"url"`
	Name             *string        `bson:"name"`
	Description      *string        `bson:"description"`
	Format           string         `bson:"format"`
	Hash             string         `bson:"hash"`
	Mimetype         *string        `bson:"mimetype"`
	MimetypeInner    *string        `bson:"mimetype_inner"`
	Size             *int64         `bson:"size"`
	Created          string         `bson:"created"`
	LastModified     *string        `bson:"last_modified"`
	MetadataModified string         `bson:"metadata_modified"`
	CacheURL         *string        `bson:"cache_url"`
	CacheLastUpdated *string        `bson:"cache_last_updated"`
	ResourceType     *string        `bson:"resource_type"`
	URLType          *string        `bson:"url_type"`
	State            string         `bson:"state"`
	Extras           map[string]any `bson:"extras,omitempty"`
	// FileID names the uploaded file in the FileStore (catalog/filestore)
	// when URLType is "upload" and the bytes are held here.
	FileID string `bson:"file_id,omitempty"`
}

// FileRef is a file the gateway stored from a request's "upload" field;
// only the gateway creates one, so its file exists and is complete.
type FileRef struct {
	FileID, Filename, Mimetype, SHA256 string
	Size                               int64
}

// Organization is a stored organization, or a group (Type "group"), with
// its memberships: CKAN keeps both in one table, and so does this catalog.
type Organization struct {
	ID          string    `bson:"_id"`
	Name        string    `bson:"name"`
	Title       string    `bson:"title"`
	Description string    `bson:"description"`
	ImageURL    string    `bson:"image_url"`
	State       string    `bson:"state"`
	Created     time.Time `bson:"created"`
	Extras      []Extra   `bson:"extras"`
	Members     []Member  `bson:"members"`
	Rev         int64     `bson:"rev"`
	// Type is "group" for a group and empty for an organization.
	Type string `bson:"type,omitempty"`
}

// Member is a user's role in an organization.
type Member struct {
	// ID is the membership id.
	ID string `bson:"id"`
	// UserID is the member.
	UserID string `bson:"user_id"`
	// Capacity is admin, editor or member.
	Capacity string `bson:"capacity"`
}

// User is what the catalog knows of a user: the gateway's identity store
// owns users, and the catalog looks them up through Options.Users.
type User = contract.UserInfo

// clone copies d deeply enough for a write to change it freely.
func (d *Dataset) clone() *Dataset {
	c := *d
	c.Tags = append([]string(nil), d.Tags...)
	c.VocabTags = append([]DatasetTag(nil), d.VocabTags...)
	c.Groups = append([]string(nil), d.Groups...)
	c.Extras = append([]Extra(nil), d.Extras...)
	c.Collaborators = append([]Collaborator(nil), d.Collaborators...)
	c.Resources = make([]Resource, len(d.Resources))
	for i, r := range d.Resources {
		c.Resources[i] = r
		if r.Extras != nil {
			c.Resources[i].Extras = make(map[string]any, len(r.Extras))
			for k, v := range r.Extras {
				c.Resources[i].Extras[k] = v
			}
		}
	}
	return &c
}

// activeResources are the resources that are not deleted, in order.
func (d *Dataset) activeResources() []Resource {
	out := make([]Resource, 0, len(d.Resources))
	for _, r := range d.Resources {
		if r.State != StateDeleted {
			out = append(out, r)
		}
	}
	return out
}

// clone copies o with its own member and extras slices.
func (o *Organization) clone() *Organization {
	c := *o
	c.Members = append([]Member(nil), o.Members...)
	c.Extras = append([]Extra(nil), o.Extras...)
	return &c
}

// role is the capacity of userID in o ("" when not a member).
func (o *Organization) role(userID string) string {
	if userID == "" {
		return ""
	}
	for _, m := range o.Members {
		if m.UserID == userID {
			return m.Capacity
		}
	}
	return ""
}
