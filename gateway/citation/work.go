// Package citation renders how to cite a catalog dataset or one of its
// versions: a plain-text reference, CSL-JSON, BibTeX, RIS and DataCite 4
// metadata (JSON and XML), and registers DOIs with DataCite's REST API.
// A Work is built from a package_show dict (FromPackage); the renderers are
// pure functions of it.
package citation

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"toxgate/gateway/dcat"
)

// Bounds on what a Work carries: a dataset's fields are user input, and a
// citation is a short text.
const (
	maxCreators   = 100
	maxKeywords   = 50
	maxFieldRunes = 4000
	// maxCreatorsJSON bounds the `creators` extra decoded as JSON.
	maxCreatorsJSON = 64 << 10
)

// Creator is an author of a work: a person (Family, Given) or an
// organization (Name alone).
type Creator struct {
	// Name is the display name: "Family, Given" for a person whose name
	// parts are known, else the name as given.
	Name string `json:"name"`
	// Given and Family are a person's name parts, empty when unknown.
	Given  string `json:"given,omitempty"`
	Family string `json:"family,omitempty"`
	// Organization marks a corporate author.
	Organization bool `json:"organization,omitempty"`
	// ORCID is the person's ORCID iD (16 digits with dashes), if given.
	ORCID string `json:"orcid,omitempty"`
	// Affiliation is the person's institution, if given.
	Affiliation string `json:"affiliation,omitempty"`
}

// Work is what a citation says about a dataset or a version of it.
type Work struct {
	// Key is a short stable key (BibTeX key, CSL id): the dataset's name,
	// with the version's name when there is one.
	Key         string
	Title       string
	Description string
	Creators    []Creator
	// Publisher is the site (its title), as Zenodo and Dataverse name
	// themselves.
	Publisher string
	// Issued is the publication date: the version's creation, else the
	// dataset's.
	Issued time.Time
	// Version is the version's name, else the dataset's version field.
	Version string
	// DOI is a registered DOI ("10.1234/abc"), empty when none.
	DOI string
	// URL is the landing page on the site.
	URL        string
	Keywords   []string
	License    string
	LicenseURL string
	// Formats and Sizes describe the files (media types, "123 bytes").
	Formats []string
	Sizes   []string
	// DatasetURL is the landing page of the dataset when the work is one
	// of its versions (DataCite's IsVersionOf), else empty.
	DatasetURL string
}

// Site is what a citation says about the site that publishes the work.
type Site struct {
	// Title is the publisher's name.
	Title string
	// URL is the site's public base URL (no trailing slash).
	URL string
}

// Version is a dataset version as a citation names it.
type Version struct {
	// ID and Name identify it; Name is what the citation prints.
	ID, Name string
	// Created is when the version was frozen (the citation's date).
	Created time.Time
	// DOI is the version's registered DOI, if any.
	DOI string
}

// FromPackage builds the Work of a package_show dict; v, when not nil,
// makes it the Work of that version of the dataset.
func FromPackage(pkg *dcat.Package, site Site, v *Version) Work {
	w := Work{
		Key:       pkg.Name,
		Title:     clip(firstNonEmpty(pkg.Title, pkg.Name)),
		Publisher: clip(firstNonEmpty(site.Title, hostOf(site.URL))),
		URL:       site.URL + "/dataset/" + url.PathEscape(pkg.Name),
		License:   clip(deref(pkg.LicenseTitle)),
	}
	if w.Publisher == "" {
		w.Publisher = "toxgate"
	}
	if pkg.Notes != nil {
		w.Description = clip(strings.TrimSpace(*pkg.Notes))
	}
	if dcatAbsURL(pkg.LicenseURL) {
		w.LicenseURL = pkg.LicenseURL
	}
	w.Issued = parseTime(pkg.MetadataCreated)
	w.Version = clip(deref(pkg.Version))
	extras := map[string]string{}
	for _, e := range pkg.Extras {
		extras[e.Key] = e.Value
	}
	w.DOI = NormalizeDOI(extras["doi"])
	if w.DOI == "" {
		w.DOI = NormalizeDOI(extras["identifier"])
	}
	w.Creators = creators(extras["creators"], pkg)
	for _, t := range pkg.Tags {
		if t.Name != "" && len(w.Keywords) < maxKeywords {
			w.Keywords = append(w.Keywords, clip(t.Name))
		}
	}
	seen := map[string]bool{}
	for _, r := range pkg.Resources {
		if m := deref(r.Mimetype); m != "" && !seen[m] {
			seen[m] = true
			w.Formats = append(w.Formats, clip(m))
		}
		if r.Size != nil && *r.Size >= 0 {
			w.Sizes = append(w.Sizes, formatInt(*r.Size)+" bytes")
		}
	}
	if v != nil {
		w.DatasetURL = w.URL
		w.URL += "?version=" + url.QueryEscape(firstNonEmpty(v.Name, v.ID))
		w.Key += "_" + firstNonEmpty(v.Name, v.ID)
		w.Version = clip(firstNonEmpty(v.Name, v.ID))
		if !v.Created.IsZero() {
			w.Issued = v.Created
		}
		w.DOI = NormalizeDOI(v.DOI)
	}
	if w.Issued.IsZero() {
		w.Issued = time.Unix(0, 0).UTC()
	}
	w.Key = bibKey(w.Key)
	return w
}

// creators reads the `creators` extra (a JSON list of names or of objects
// {name | given+family, orcid, affiliation, organization}, or names
// separated by ";"), else the author, else the maintainer, else the
// owner organization, else the site.
func creators(extra string, pkg *dcat.Package) []Creator {
	var out []Creator
	extra = strings.TrimSpace(extra)
	if extra != "" && len(extra) <= maxCreatorsJSON && strings.HasPrefix(extra, "[") {
		var raw []json.RawMessage
		if json.Unmarshal([]byte(extra), &raw) == nil {
			for _, r := range raw {
				var s string
				if json.Unmarshal(r, &s) == nil {
					if c, ok := parseName(s); ok {
						out = append(out, c)
					}
					continue
				}
				var c Creator
				if json.Unmarshal(r, &c) != nil {
					continue
				}
				if c, ok := tidy(c); ok {
					out = append(out, c)
				}
			}
		}
	} else if extra != "" {
		out = splitNames(extra)
	}
	if len(out) == 0 {
		out = splitNames(deref(pkg.Author))
	}
	if len(out) == 0 {
		out = splitNames(deref(pkg.Maintainer))
	}
	if len(out) == 0 && pkg.Organization != nil {
		if n := clip(firstNonEmpty(pkg.Organization.Title, pkg.Organization.Name)); n != "" {
			out = []Creator{{Name: n, Organization: true}}
		}
	}
	if len(out) > maxCreators {
		out = out[:maxCreators]
	}
	return out
}

// splitNames splits "A. Silva; B. Costa" (or " and ") into creators.
func splitNames(s string) []Creator {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	sep := ";"
	if !strings.Contains(s, ";") && strings.Contains(s, " and ") {
		sep = " and "
	}
	var out []Creator
	for _, part := range strings.Split(s, sep) {
		if c, ok := parseName(part); ok {
			out = append(out, c)
		}
		if len(out) == maxCreators {
			break
		}
	}
	return out
}

// parseName reads "Family, Given" or "Given Family"; one word stays a
// name without parts.
func parseName(s string) (Creator, bool) {
	s = clip(strings.Join(strings.Fields(s), " "))
	if s == "" {
		return Creator{}, false
	}
	if fam, given, ok := strings.Cut(s, ","); ok {
		fam, given = strings.TrimSpace(fam), strings.TrimSpace(given)
		if fam != "" && given != "" {
			return Creator{Name: fam + ", " + given, Family: fam, Given: given}, true
		}
		s = strings.Trim(s, ", ")
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		return Creator{Name: s[i+1:] + ", " + s[:i], Family: s[i+1:], Given: s[:i]}, true
	}
	return Creator{Name: s}, true
}

// tidy checks a creator given as an object.
func tidy(c Creator) (Creator, bool) {
	c.Given, c.Family = clip(strings.TrimSpace(c.Given)), clip(strings.TrimSpace(c.Family))
	c.Name, c.Affiliation = clip(strings.TrimSpace(c.Name)), clip(strings.TrimSpace(c.Affiliation))
	if !orcidRE.MatchString(c.ORCID) {
		c.ORCID = ""
	}
	switch {
	case c.Organization:
		c.Given, c.Family = "", ""
		if c.Name == "" {
			return Creator{}, false
		}
	case c.Family != "" && c.Given != "":
		c.Name = c.Family + ", " + c.Given
	case c.Name != "":
		p, _ := parseName(c.Name)
		p.ORCID, p.Affiliation = c.ORCID, c.Affiliation
		c = p
	default:
		return Creator{}, false
	}
	return c, true
}

var (
	orcidRE = regexp.MustCompile(`^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$`)
	doiRE   = regexp.MustCompile(`^10\.\d{4,9}/[^\s]+$`)
)

// NormalizeDOI returns the DOI in s ("10.1234/x", "doi:10.1234/x" or a
// https://doi.org/ URL), or "" when s holds none.
func NormalizeDOI(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:", "DOI:"} {
		s = strings.TrimPrefix(s, p)
	}
	if len(s) > 300 || !doiRE.MatchString(s) {
		return ""
	}
	return s
}

// bibKey keeps the letters, digits and -_: of a key.
func bibKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			b.WriteRune(r)
		}
		if b.Len() >= 100 {
			break
		}
	}
	if b.Len() == 0 {
		return "dataset"
	}
	return b.String()
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxFieldRunes {
		return s
	}
	return string([]rune(s)[:maxFieldRunes])
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return ""
}

func dcatAbsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func parseTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
