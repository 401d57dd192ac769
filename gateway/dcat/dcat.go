// Package dcat publishes the catalog as DCAT-AP 3 (the vocabulary European
// data portals harvest) at ckanext-dcat's endpoints: /catalog.{ttl,jsonld,xml}
// paged with Hydra, and /dataset/{name}.{ttl,jsonld,xml}. It reads the
// catalog through its CKAN actions (package_search, package_show) as the
// caller, so each caller sees exactly the datasets the API shows them.
package dcat

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"toxgate/gateway/rdf"
)

// Namespaces of DCAT-AP 3.
const (
	nsDCAT  = "http://www.w3.org/ns/dcat#"
	nsDCT   = "http://purl.org/dc/terms/"
	nsFOAF  = "http://xmlns.com/foaf/0.1/"
	nsVCard = "http://www.w3.org/2006/vcard/ns#"
	nsSPDX  = "http://spdx.org/rdf/terms#"
	nsHydra = "http://www.w3.org/ns/hydra/core#"
	nsOWL   = "http://www.w3.org/2002/07/owl#"
)

var prefixes = []rdf.Prefix{
	{Name: "dcat", NS: nsDCAT}, {Name: "dct", NS: nsDCT}, {Name: "foaf", NS: nsFOAF},
	{Name: "vcard", NS: nsVCard}, {Name: "spdx", NS: nsSPDX}, {Name: "hydra", NS: nsHydra},
	{Name: "owl", NS: nsOWL},
}

func p(ns, local string) rdf.Term { return rdf.IRI(ns + local) }

// Package is what the mapping reads of a package_show dict.
type Package struct {
	ID               string                        `json:"id"`
	Name             string                        `json:"name"`
	Title            string                        `json:"title"`
	Private          bool                          `json:"private"`
	Notes            *string                       `json:"notes"`
	URL              *string                       `json:"url"`
	Version          *string                       `json:"version"`
	Author           *string                       `json:"author"`
	AuthorEmail      *string                       `json:"author_email"`
	Maintainer       *string                       `json:"maintainer"`
	MaintainerEmail  *string                       `json:"maintainer_email"`
	LicenseID        *string                       `json:"license_id"`
	LicenseTitle     *string                       `json:"license_title"`
	LicenseURL       string                        `json:"license_url"`
	MetadataCreated  string                        `json:"metadata_created"`
	MetadataModified string                        `json:"metadata_modified"`
	Organization     *Organization                 `json:"organization"`
	Tags             []struct{ Name string }       `json:"tags"`
	Extras           []struct{ Key, Value string } `json:"extras"`
	Resources        []Resource                    `json:"resources"`
}

// Organization is a dataset's owner organization.
type Organization struct {
	ID, Name, Title string
	ImageURL        string `json:"image_url"`
}

// Resource is what the mapping reads of a resource dict.
type Resource struct {
	ID               string  `json:"id"`
	Name             *string `json:"name"`
	Description      *string `json:"description"`
	URL              string  `json:"url"`
	URLType          *string `json:"url_type"`
	Format           string  `json:"format"`
	Mimetype         *string `json:"mimetype"`
	Size             *int64  `json:"size"`
	Hash             string  `json:"hash"`
	Created          string  `json:"created"`
	LastModified     *string `json:"last_modified"`
	MetadataModified string  `json:"metadata_modified"`
	// DatastoreActive marks a resource whose rows are a DataStore table.
	DatastoreActive bool `json:"datastore_active"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// absURL reports whether s is an absolute http(s), ftp or mailto URL, the
// only values published as IRIs (anything else a user typed is left out).
func absURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ftp":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// dateTime is a CKAN timestamp (UTC, no zone) as an xsd:dateTime literal.
func dateTime(s string) (rdf.Term, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return rdf.Typed(t.UTC().Format("2006-01-02T15:04:05.999999Z"), rdf.NSXSD+"dateTime"), true
		}
	}
	return rdf.Term{}, false
}

// mapper adds datasets to a graph; site is the catalog's base URI.
type mapper struct {
	g    *rdf.Graph
	site string
}

func (m *mapper) datasetURI(pkg *Package) rdf.Term {
	return rdf.IRI(m.site + "/dataset/" + url.PathEscape(pkg.ID))
}

// addDataset adds a dcat:Dataset and its distributions and returns its node.
func (m *mapper) addDataset(pkg *Package) rdf.Term {
	g := m.g
	d := m.datasetURI(pkg)
	g.Add(d, rdf.Type, p(nsDCAT, "Dataset"))
	title := pkg.Title
	if title == "" {
		title = pkg.Name
	}
	g.Add(d, p(nsDCT, "title"), rdf.Literal(title))
	if n := str(pkg.Notes); n != "" {
		g.Add(d, p(nsDCT, "description"), rdf.Literal(n))
	}
	for _, t := range pkg.Tags {
		if t.Name != "" {
			g.Add(d, p(nsDCAT, "keyword"), rdf.Literal(t.Name))
		}
	}
	identifier := pkg.ID
	for _, e := range pkg.Extras {
		if e.Key == "identifier" && strings.TrimSpace(e.Value) != "" {
			identifier = strings.TrimSpace(e.Value)
		}
	}
	g.Add(d, p(nsDCT, "identifier"), rdf.Literal(identifier))
	if t, ok := dateTime(pkg.MetadataCreated); ok {
		g.Add(d, p(nsDCT, "issued"), t)
	}
	if t, ok := dateTime(pkg.MetadataModified); ok {
		g.Add(d, p(nsDCT, "modified"), t)
	}
	if v := str(pkg.Version); v != "" {
		g.Add(d, p(nsOWL, "versionInfo"), rdf.Literal(v))
		g.Add(d, p(nsDCAT, "version"), rdf.Literal(v)) // DCAT 3's own term, beside DCAT-AP 2's owl:versionInfo
	}
	landing := m.site + "/dataset/" + url.PathEscape(pkg.Name)
	if u := str(pkg.URL); absURL(u) {
		landing = u
	}
	g.Add(d, p(nsDCAT, "landingPage"), rdf.IRI(landing))
	if absURL(pkg.LicenseURL) {
		g.Add(d, p(nsDCT, "license"), rdf.IRI(pkg.LicenseURL))
	}
	if o := pkg.Organization; o != nil && o.ID != "" {
		org := rdf.IRI(m.site + "/organization/" + url.PathEscape(o.ID))
		g.Add(d, p(nsDCT, "publisher"), org)
		g.Add(org, rdf.Type, p(nsFOAF, "Organization"))
		name := o.Title
		if name == "" {
			name = o.Name
		}
		g.Add(org, p(nsFOAF, "name"), rdf.Literal(name))
		g.Add(org, p(nsFOAF, "homepage"), rdf.IRI(m.site+"/organization/"+url.PathEscape(o.Name)))
	}
	// The contact point: the maintainer, else the author (ckanext-dcat's fallback).
	name, email := str(pkg.Maintainer), str(pkg.MaintainerEmail)
	if name == "" && email == "" {
		name, email = str(pkg.Author), str(pkg.AuthorEmail)
	}
	if name != "" || email != "" {
		c := g.NewBlank()
		g.Add(d, p(nsDCAT, "contactPoint"), c)
		g.Add(c, rdf.Type, p(nsVCard, "Kind"))
		if name != "" {
			g.Add(c, p(nsVCard, "fn"), rdf.Literal(name))
		}
		if email != "" {
			if !strings.HasPrefix(email, "mailto:") {
				email = "mailto:" + email
			}
			if absURL(email) {
				g.Add(c, p(nsVCard, "hasEmail"), rdf.IRI(email))
			}
		}
	}
	for i := range pkg.Resources {
		m.addDistribution(d, pkg, &pkg.Resources[i])
	}
	return d
}

func (m *mapper) addDistribution(d rdf.Term, pkg *Package, r *Resource) {
	g := m.g
	dist := rdf.IRI(m.site + "/dataset/" + url.PathEscape(pkg.ID) + "/resource/" + url.PathEscape(r.ID))
	g.Add(d, p(nsDCAT, "distribution"), dist)
	g.Add(dist, rdf.Type, p(nsDCAT, "Distribution"))
	if n := str(r.Name); n != "" {
		g.Add(dist, p(nsDCT, "title"), rdf.Literal(n))
	}
	if n := str(r.Description); n != "" {
		g.Add(dist, p(nsDCT, "description"), rdf.Literal(n))
	}
	if absURL(r.URL) {
		g.Add(dist, p(nsDCAT, "accessURL"), rdf.IRI(r.URL))
		if str(r.URLType) == "upload" {
			g.Add(dist, p(nsDCAT, "downloadURL"), rdf.IRI(r.URL))
		}
	}
	if mt := str(r.Mimetype); mt != "" && strings.Count(mt, "/") == 1 && !strings.ContainsAny(mt, " ;") {
		g.Add(dist, p(nsDCAT, "mediaType"), rdf.IRI("https://www.iana.org/assignments/media-types/"+mt))
	}
	if f := strings.TrimSpace(r.Format); f != "" {
		g.Add(dist, p(nsDCT, "format"), rdf.Literal(f))
	}
	if r.Size != nil && *r.Size >= 0 {
		g.Add(dist, p(nsDCAT, "byteSize"), rdf.Typed(strconv.FormatInt(*r.Size, 10), rdf.NSXSD+"nonNegativeInteger"))
	}
	if hex, ok := strings.CutPrefix(strings.TrimSpace(r.Hash), "sha256:"); ok && isHex(hex, 64) {
		c := g.NewBlank()
		g.Add(dist, p(nsSPDX, "checksum"), c)
		g.Add(c, rdf.Type, p(nsSPDX, "Checksum"))
		g.Add(c, p(nsSPDX, "algorithm"), p(nsSPDX, "checksumAlgorithm_sha256"))
		g.Add(c, p(nsSPDX, "checksumValue"), rdf.Typed(strings.ToLower(hex), rdf.NSXSD+"hexBinary"))
	}
	if absURL(pkg.LicenseURL) {
		g.Add(dist, p(nsDCT, "license"), rdf.IRI(pkg.LicenseURL))
	}
	if t, ok := dateTime(r.Created); ok {
		g.Add(dist, p(nsDCT, "issued"), t)
	}
	modified := r.MetadataModified
	if lm := str(r.LastModified); lm != "" {
		modified = lm
	}
	if t, ok := dateTime(modified); ok {
		g.Add(dist, p(nsDCT, "modified"), t)
	}
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Version is what the mapping reads of a dataset version
// (dataset_version_list).
type Version struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Created string `json:"created"`
	DOI     string `json:"doi"`
}

// addVersions links the dataset to each of its versions (DCAT 3's
// dcat:hasVersion / dcat:isVersionOf); a version is a dcat:Dataset at
// <site/dataset/{id}?version={version id}> with its name as dcat:version
// and its creation as dct:issued.
func (m *mapper) addVersions(d rdf.Term, pkg *Package, versions []Version) {
	for _, v := range versions {
		if v.ID == "" {
			continue
		}
		vn := rdf.IRI(m.site + "/dataset/" + url.PathEscape(pkg.ID) + "?version=" + url.QueryEscape(v.ID))
		m.g.Add(d, p(nsDCAT, "hasVersion"), vn)
		m.g.Add(vn, rdf.Type, p(nsDCAT, "Dataset"))
		m.g.Add(vn, p(nsDCAT, "isVersionOf"), d)
		m.g.Add(vn, p(nsDCAT, "version"), rdf.Literal(v.Name))
		m.g.Add(vn, p(nsDCT, "title"), rdf.Literal(firstNonEmptyTitle(pkg)+" ("+v.Name+")"))
		if t, ok := dateTime(v.Created); ok {
			m.g.Add(vn, p(nsDCT, "issued"), t)
		}
		if v.DOI != "" {
			m.g.Add(vn, p(nsDCT, "identifier"), rdf.Literal("https://doi.org/"+v.DOI))
		}
	}
}

func firstNonEmptyTitle(pkg *Package) string {
	if pkg.Title != "" {
		return pkg.Title
	}
	return pkg.Name
}
