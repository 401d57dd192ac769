package catalog

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"toxgate/catalog/ckan"
)

// DefaultReplyCacheEntries is how many encoded package_show replies a
// catalog keeps when Options.ReplyCacheEntries is 0.
const DefaultReplyCacheEntries = 20000

// replyCache holds the encoded dicts of the datasets read most recently,
// at most a fixed number; the others are encoded again when asked for.
type replyCache struct {
	c *lru.Cache[string, *renderedDataset]
}

// newReplyCache is a cache of at most n replies (DefaultReplyCacheEntries
// when n <= 0).
func newReplyCache(n int) *replyCache {
	if n <= 0 {
		n = DefaultReplyCacheEntries
	}
	c, err := lru.New[string, *renderedDataset](n)
	if err != nil { // only for n <= 0
		panic(err)
	}
	return &replyCache{c: c}
}

func (r *replyCache) load(id string) (*renderedDataset, bool) { return r.c.Get(id) }
func (r *replyCache) store(id string, v *renderedDataset)     { r.c.Add(id, v) }

// Delete forgets the reply of dataset id.
func (r *replyCache) Delete(id string) { r.c.Remove(id) }

// Clear forgets every reply.
func (r *replyCache) Clear() { r.c.Purge() }

// renderedDataset is a dataset dict encoded once, with what it was
// rendered from. Records are never changed in place (a write stores a new
// *Dataset or *Organization), so the same pointers mean the same bytes.
type renderedDataset struct {
	d    *Dataset
	org  *Organization
	site string
	json ckan.RawJSON
}

// datasetJSON is datasetDict(d, siteURL) encoded as ckan.Marshal encodes
// it, kept per dataset until the dataset, its organization or (for
// datasets with uploaded files, whose URLs name the site) the site URL
// changes, while it is among the replyCache's most recently read. Callers
// hold a lock and must not modify the bytes.
func (st *readModel) datasetJSON(d *Dataset, siteURL string) (ckan.RawJSON, error) {
	org := st.orgs[d.OwnerOrg]
	site := ""
	if d.hasUploads() {
		site = siteURL
	}
	if r, ok := st.rendered.load(d.ID); ok && r.d == d && r.org == org && r.site == site {
		return r.json, nil
	}
	b, err := ckan.Marshal(st.datasetDict(d, siteURL))
	if err != nil {
		return nil, err
	}
	st.rendered.store(d.ID, &renderedDataset{d: d, org: org, site: site, json: b})
	return b, nil
}

// hasUploads reports whether a resource of d is an upload, whose URL is
// built from the site URL.
func (d *Dataset) hasUploads() bool {
	for i := range d.Resources {
		if t := d.Resources[i].URLType; t != nil && *t == "upload" {
			return true
		}
	}
	return false
}
