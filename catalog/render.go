package catalog

import (
	"toxgate/catalog/ckan"
)

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
// changes. Callers hold a lock and must not modify the bytes.
func (st *readModel) datasetJSON(d *Dataset, siteURL string) (ckan.RawJSON, error) {
	org := st.orgs[d.OwnerOrg]
	site := ""
	if d.hasUploads() {
		site = siteURL
	}
	if v, ok := st.rendered.Load(d.ID); ok {
		if r := v.(*renderedDataset); r.d == d && r.org == org && r.site == site {
			return r.json, nil
		}
	}
	b, err := ckan.Marshal(st.datasetDict(d, siteURL))
	if err != nil {
		return nil, err
	}
	st.rendered.Store(d.ID, &renderedDataset{d: d, org: org, site: site, json: b})
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
