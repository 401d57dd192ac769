package catalog

import (
	"sort"
	"strings"
	"time"
	"toxgate/catalog/search"
)

// isoZ formats t for range queries and sorting.
func isoZ(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// Field boosts of CKAN's dismax handler: qf="name^4 title^4 tags^2 groups^2 text".
const (
	boostName = 4
	boostTags = 2
	boostText = 1
)

// docFor builds the search document of d. Callers hold a lock.
func (st *readModel) docFor(d *Dataset) *search.Doc {
	created, modified := isoZ(d.MetadataCreated), isoZ(d.MetadataModified)
	f := map[string][]string{
		"id": {d.ID}, "name": {d.Name}, "title": {d.Title}, "state": {d.State},
		"type": {d.Type}, "dataset_type": {d.Type}, "creator_user_id": {d.CreatorUserID},
		"metadata_created": {created}, "metadata_modified": {modified},
		"title_string": {d.Title}, "tags": d.Tags, "site_id": {"default"},
	}
	if d.Private {
		f["capacity"] = []string{"private"}
	} else {
		f["capacity"] = []string{"public"}
	}
	text := map[string]float64{}
	add := func(s string, w float64) {
		for _, t := range search.Tokens(s) {
			text[t] += w
		}
	}
	var all []string
	addField := func(name string, p *string) {
		if p != nil && *p != "" {
			f[name] = []string{*p}
			all = append(all, *p)
		}
	}
	addField("notes", d.Notes)
	addField("author", d.Author)
	addField("maintainer", d.Maintainer)
	addField("license_id", d.LicenseID)
	addField("url", d.URL)
	addField("version", d.Version)
	if d.OwnerOrg != "" {
		f["owner_org"] = []string{d.OwnerOrg}
		if o := st.orgs[d.OwnerOrg]; o != nil {
			f["organization"] = []string{o.Name}
			all = append(all, o.Name, o.Title)
		}
	}
	for _, r := range d.Resources {
		if r.State == StateDeleted {
			continue
		}
		if r.Format != "" {
			f["res_format"] = append(f["res_format"], r.Format)
		}
		if r.Name != nil && *r.Name != "" {
			f["res_name"] = append(f["res_name"], *r.Name)
			all = append(all, *r.Name)
		}
		if r.Description != nil && *r.Description != "" {
			f["res_description"] = append(f["res_description"], *r.Description)
			all = append(all, *r.Description)
		}
		f["res_url"] = append(f["res_url"], r.URL)
		if r.ResourceType != nil {
			f["res_type"] = append(f["res_type"], *r.ResourceType)
		}
	}
	for _, e := range d.Extras {
		f["extras_"+e.Key] = []string{e.Value}
		all = append(all, e.Value)
	}
	all = append(all, st.groupVocabFields(d, f)...)
	text[strings.ToLower(d.Name)] += boostName
	add(d.Name, boostName)
	add(d.Title, boostName)
	for _, t := range d.Tags {
		add(t, boostTags)
		all = append(all, t)
	}
	all = append(all, d.Name, d.Title)
	for _, s := range all {
		add(s, boostText)
	}
	f["text"] = all
	return &search.Doc{
		Ref: d,
		// packageSearch's Allow accepts active public datasets for anyone
		Public: d.State == StateActive && !d.Private,
		ID:     d.ID,
		Fields: f,
		Text:   text,
		Sort: map[string]string{
			"name": d.Name, "title_string": strings.ToLower(d.Title),
			"metadata_modified": modified, "metadata_created": created,
		},
	}
}

// sortedNames returns the names of datasets passing keep, ascending
// (bytewise). Callers hold a lock.
func (st *readModel) sortedNames(keep func(*Dataset) bool) []string {
	names := make([]string, 0, len(st.datasets))
	for _, d := range st.datasets {
		if keep(d) {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	return names
}
