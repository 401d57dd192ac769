package web

import (
	"errors"
	"html/template"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"toxgate/gateway/citation"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/catalogclient"
)

// Dataset is a CKAN dataset as the pages show it.
type Dataset struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	Title            string         `json:"title"`
	Notes            string         `json:"notes"`
	Private          bool           `json:"private"`
	State            string         `json:"state"`
	Author           string         `json:"author"`
	AuthorEmail      string         `json:"author_email"`
	Maintainer       string         `json:"maintainer"`
	MaintainerEmail  string         `json:"maintainer_email"`
	Version          string         `json:"version"`
	URL              string         `json:"url"`
	LicenseID        string         `json:"license_id"`
	LicenseTitle     string         `json:"license_title"`
	MetadataCreated  string         `json:"metadata_created"`
	MetadataModified string         `json:"metadata_modified"`
	OwnerOrg         string         `json:"owner_org"`
	Organization     *Organization  `json:"organization"`
	Tags             []Tag          `json:"tags"`
	Groups           []Organization `json:"groups"`
	Extras           []Extra        `json:"extras"`
	Resources        []Resource     `json:"resources"`
	NumResources     int            `json:"num_resources"`
	Raw              map[string]any `json:"-"`
}

// DisplayTitle is the title, else the name.
func (d Dataset) DisplayTitle() string {
	if d.Title != "" {
		return d.Title
	}
	return d.Name
}

// Formats lists the distinct resource formats.
func (d Dataset) Formats() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range d.Resources {
		f := strings.ToUpper(r.Format)
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// Tag is a dataset tag.
type Tag struct {
	Name         string `json:"name"`
	VocabularyID string `json:"vocabulary_id"`
}

// Extra is a custom key/value of a dataset.
type Extra struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Resource is a CKAN resource.
type Resource struct {
	ID              string `json:"id"`
	PackageID       string `json:"package_id"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	Format          string `json:"format"`
	Mimetype        string `json:"mimetype"`
	URL             string `json:"url"`
	URLType         string `json:"url_type"`
	Size            *int64 `json:"size"`
	Created         string `json:"created"`
	LastModified    string `json:"last_modified"`
	DatastoreActive bool   `json:"datastore_active"`
	Position        int    `json:"position"`
}

// DisplayName is the name, else the last part of the URL, else the id.
func (r Resource) DisplayName() string {
	if r.Name != "" {
		return r.Name
	}
	if i := strings.LastIndexByte(r.URL, '/'); i >= 0 && i < len(r.URL)-1 {
		return r.URL[i+1:]
	}
	return r.ID
}

// Uploaded reports whether the file is held by the gateway's file store.
func (r Resource) Uploaded() bool { return r.URLType == "upload" }

// Organization is a CKAN organization.
type Organization struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Title         string    `json:"title"`
	Description   string    `json:"description"`
	ImageURL      string    `json:"image_url"`
	Created       string    `json:"created"`
	PackageCount  int       `json:"package_count"`
	Users         []OrgUser `json:"users"`
	NumFollowers  int       `json:"num_followers"`
	ApprovalState string    `json:"approval_status"`
}

// DisplayTitle is the title, else the name.
func (o Organization) DisplayTitle() string {
	if o.Title != "" {
		return o.Title
	}
	return o.Name
}

// OrgUser is a member of an organization.
type OrgUser struct {
	Name     string `json:"name"`
	Capacity string `json:"capacity"`
}

// searchResult is package_search's result.
type searchResult struct {
	Count        int                    `json:"count"`
	Results      []Dataset              `json:"results"`
	SearchFacets map[string]searchFacet `json:"search_facets"`
}

type searchFacet struct {
	Title string      `json:"title"`
	Items []facetItem `json:"items"`
}

type facetItem struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Count       int    `json:"count"`
}

// facetFields are the facets of the search page, in order, with their titles.
var facetFields = []struct{ Field, Title string }{
	{"organization", "Organizations"},
	{"groups", "Groups"},
	{"tags", "Tags"},
	{"res_format", "Formats"},
	{"license_id", "Licenses"},
}

// sortOptions are the search page's orders (CKAN's).
var sortOptions = []struct{ Value, Label string }{
	{"score desc, metadata_modified desc", "Relevance"},
	{"title_string asc", "Name ascending"},
	{"title_string desc", "Name descending"},
	{"metadata_modified desc", "Last modified"},
}

// PageSize is the number of datasets on a search page.
const PageSize = 20

// Facet is one facet block on the search page.
type Facet struct {
	Field, Title string
	Items        []FacetLink
}

// FacetLink is one facet value with the link that adds or removes it.
type FacetLink struct {
	Name, Label string
	Count       int
	Active      bool
	Href        string
}

// Filter is an applied facet filter.
type Filter struct {
	Field, Value, RemoveHref string
}

type searchData struct {
	Q, Sort  string
	Sorts    []struct{ Value, Label string }
	Count    int
	Datasets []Dataset
	Facets   []Facet
	Filters  []Filter
	Page     int
	Pages    []pageLink
	Prev     string
	Next     string
	OrgName  string // set on an organization or group page
	// Section is "organization" or "group" on those pages (their paths).
	Section string
	Base    string // the path of the page (/dataset or /organization/{name})
	CanEdit bool
	Org     *Organization
	// Structure is the structure box's value; StructureError why it found
	// nothing (it resolves to no compound, or structure search is off);
	// StructureRemove the page without it.
	Structure, StructureError, StructureRemove string
}

type pageLink struct {
	N       int
	Href    string
	Current bool
}

// structureParam is the search page's structure box: a SMILES, name or
// identifier narrowing the datasets to those holding a similar compound
// (package_search's structure: filter). It travels with the facet filters.
const structureParam = "structure"

// maxStructureParam bounds the structure box (the resolver's own bound).
const maxStructureParam = 2000

// searchArgs reads the page's query string: q, sort, page, the facet
// filters and the structure box (kept among the filters).
func searchArgs(ctx *fasthttp.RequestCtx) (q, sortBy string, page int, filters url.Values) {
	args := ctx.QueryArgs()
	q = strings.TrimSpace(string(args.Peek("q")))
	sortBy = string(args.Peek("sort"))
	page, _ = strconv.Atoi(string(args.Peek("page")))
	if page < 1 {
		page = 1
	}
	filters = url.Values{}
	for _, f := range facetFields {
		for _, v := range args.PeekMulti(f.Field) {
			if s := strings.TrimSpace(string(v)); s != "" {
				filters.Add(f.Field, s)
			}
		}
	}
	// a SMILES never holds a double quote, which would end the filter
	if s := strings.TrimSpace(strings.ReplaceAll(string(args.Peek(structureParam)), `"`, "")); s != "" && len(s) <= maxStructureParam {
		filters.Set(structureParam, s)
	}
	return q, sortBy, page, filters
}

// fqOf builds package_search's fq from facet filters (quoted values).
func fqOf(filters url.Values) string {
	var parts []string
	for _, f := range facetFields {
		for _, v := range filters[f.Field] {
			parts = append(parts, f.Field+":"+strconv.Quote(v))
		}
	}
	if v := filters.Get(structureParam); v != "" {
		parts = append(parts, structureParam+`:"`+v+`"`)
	}
	return strings.Join(parts, " ")
}

// link is the search page's URL with the given state.
func link(base, q, sortBy string, page int, filters url.Values) string {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if sortBy != "" {
		v.Set("sort", sortBy)
	}
	for k, vals := range filters {
		for _, x := range vals {
			v.Add(k, x)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return base
	}
	return base + "?" + v.Encode()
}

func withValue(filters url.Values, field, value string, add bool) url.Values {
	out := url.Values{}
	for k, vals := range filters {
		for _, x := range vals {
			if k == field && x == value {
				continue
			}
			out.Add(k, x)
		}
	}
	if add {
		out.Add(field, value)
	}
	return out
}

// search runs package_search for the page's query and fills searchData.
func (w *Web) search(r *req, base string, extraFQ string) (searchData, error) {
	q, sortBy, page, filters := searchArgs(r.ctx)
	fq := fqOf(filters)
	if extraFQ != "" {
		fq = strings.TrimSpace(extraFQ + " " + fq)
	}
	fields := make([]string, len(facetFields))
	for i, f := range facetFields {
		fields[i] = f.Field
	}
	args := map[string]any{
		"q": q, "fq": fq, "rows": PageSize, "start": (page - 1) * PageSize,
		"facet.field": fields, "facet.limit": 10, "include_private": true,
	}
	if sortBy != "" {
		args["sort"] = sortBy
	}
	var res searchResult
	structure := filters.Get(structureParam)
	if err := w.call(r, "package_search", args, &res); err != nil {
		// a structure that resolves to nothing is the searcher's to fix:
		// the page says why, with the form to change it
		var ce *catalogclient.Error
		if structure == "" || !errors.As(err, &ce) || (ce.Status != fasthttp.StatusBadRequest && ce.Status != fasthttp.StatusConflict) {
			return searchData{}, err
		}
		return searchData{Q: q, Sort: sortBy, Sorts: sortOptions, Page: page, Base: base, Structure: structure,
			StructureError: ce.Error()}, nil
	}
	d := searchData{Q: q, Sort: sortBy, Sorts: sortOptions, Count: res.Count, Datasets: res.Results, Page: page, Base: base, Structure: structure}
	for _, f := range facetFields {
		sf, ok := res.SearchFacets[f.Field]
		if !ok || len(sf.Items) == 0 {
			continue
		}
		items := append([]facetItem(nil), sf.Items...)
		sort.SliceStable(items, func(i, j int) bool { return items[i].Count > items[j].Count })
		fc := Facet{Field: f.Field, Title: f.Title}
		for _, it := range items {
			active := false
			for _, v := range filters[f.Field] {
				active = active || v == it.Name
			}
			label := it.DisplayName
			if label == "" {
				label = it.Name
			}
			fc.Items = append(fc.Items, FacetLink{Name: it.Name, Label: label, Count: it.Count, Active: active,
				Href: link(base, q, sortBy, 1, withValue(filters, f.Field, it.Name, !active))})
		}
		d.Facets = append(d.Facets, fc)
	}
	for _, f := range facetFields {
		for _, v := range filters[f.Field] {
			d.Filters = append(d.Filters, Filter{Field: f.Field, Value: v, RemoveHref: link(base, q, sortBy, 1, withValue(filters, f.Field, v, false))})
		}
	}
	if structure != "" {
		d.StructureRemove = link(base, q, sortBy, 1, withValue(filters, structureParam, structure, false))
	}
	pages := (res.Count + PageSize - 1) / PageSize
	if pages > 1 {
		for n := max(1, page-3); n <= min(pages, page+3); n++ {
			d.Pages = append(d.Pages, pageLink{N: n, Href: link(base, q, sortBy, n, filters), Current: n == page})
		}
		if page > 1 {
			d.Prev = link(base, q, sortBy, page-1, filters)
		}
		if page < pages {
			d.Next = link(base, q, sortBy, page+1, filters)
		}
	}
	return d, nil
}

// catalogFail renders a failed catalog action: 404 for not found and for
// not authorized on reads (as CKAN hides private records), the message otherwise.
func (w *Web) catalogFail(r *req, what string, err error) {
	var ce *catalogclient.Error
	if errors.As(err, &ce) {
		switch {
		case ce.Status == fasthttp.StatusNotFound || (ce.Status == fasthttp.StatusForbidden && r.ctx.IsGet()):
			w.render(r, fasthttp.StatusNotFound, "message", what+" not found", map[string]string{"Text": what + " not found, or you are not allowed to see it."}, "", "")
		case ce.Status == fasthttp.StatusForbidden:
			w.render(r, fasthttp.StatusForbidden, "message", "Not allowed", map[string]string{"Text": ce.Error()}, "", "")
		default:
			w.render(r, ce.Status, "message", "Catalog error", map[string]string{"Text": ce.Error()}, "", "")
		}
		return
	}
	w.fail(r, err)
}

func (w *Web) datasetSearch(r *req) {
	d, err := w.search(r, "/dataset", "")
	if err != nil {
		w.catalogFail(r, "Datasets", err)
		return
	}
	d.CanEdit = !r.catalogCaller().Anonymous()
	w.render(r, fasthttp.StatusOK, "dataset_search", "Datasets", d, w.doneFlash(r), "")
}

type datasetData struct {
	D       Dataset
	Notes   template.HTML
	CanEdit bool
	// Activity is the dataset's latest activity (package_activity_list).
	Activity []activityItem
	// Versions are the dataset's versions, newest first.
	Versions []versionItem
	// Citation is how to cite the dataset (text), "" when not served.
	Citation string
	// CiteFormats are the citation downloads linked beside it.
	CiteFormats []citeLink
}

// citeLink is one citation download on the dataset page.
type citeLink struct{ Label, File string }

// citeLinks are the citation formats the gateway serves under
// /dataset/{id}/ (gateway/citation) and the Croissant description.
func citeLinks() []citeLink {
	var out []citeLink
	for _, f := range citation.OrderedFormats() {
		out = append(out, citeLink{f.Label, f.File})
	}
	return append(out, citeLink{"Croissant", "croissant.jsonld"})
}

// activityItem is one line of a dataset's activity: who did what, when.
type activityItem struct {
	ActivityType string `json:"activity_type"`
	Timestamp    string `json:"timestamp"`
	UserID       string `json:"user_id"`
	Data         struct {
		Actor string `json:"actor"`
	} `json:"data"`
}

// Who is the acting user's name, as recorded with the activity.
func (a activityItem) Who() string {
	if a.Data.Actor != "" {
		return a.Data.Actor
	}
	return a.UserID
}

// What says what the activity did to the dataset.
func (a activityItem) What() string {
	switch a.ActivityType {
	case "new package":
		return "created the dataset"
	case "deleted package":
		return "deleted the dataset"
	case "changed package":
		return "updated the dataset"
	}
	return a.ActivityType
}

// datasetActivityShown is how many activities the dataset page lists.
const datasetActivityShown = 10

// datasetActivity reads the dataset's latest activity as the page's user;
// the page shows without it when it cannot be read.
func (w *Web) datasetActivity(r *req, id string) []activityItem {
	var items []activityItem
	if err := w.call(r, "package_activity_list", map[string]any{"id": id, "limit": datasetActivityShown}, &items); err != nil {
		w.log.Warn("web: package_activity_list", "err", err)
		return nil
	}
	return items
}

// showDataset reads a dataset by id or name.
func (w *Web) showDataset(r *req, id string) (Dataset, error) {
	var d Dataset
	err := w.call(r, "package_show", map[string]any{"id": id}, &d)
	return d, err
}

// canUpdate asks the catalog whether the user may update the dataset (its
// internal package_writable action: org editors and admins, and the
// dataset's editor collaborators).
func (w *Web) canUpdate(r *req, d *Dataset) bool {
	c := r.catalogCaller()
	if c.Anonymous() {
		return false
	}
	if c.Sysadmin {
		return true
	}
	return w.call(r, "package_writable", map[string]any{"id": d.ID}, nil) == nil
}

// editableOrgs lists the organizations where the user may create datasets.
func (w *Web) editableOrgs(r *req) []Organization {
	if r.catalogCaller().Anonymous() {
		return nil
	}
	var orgs []Organization
	if err := w.call(r, "organization_list_for_user", map[string]any{"permission": "create_dataset"}, &orgs); err != nil {
		w.log.Warn("web: organization_list_for_user", "err", err)
		return nil
	}
	return orgs
}

func pathValue(r *req, key string) string { s, _ := r.ctx.UserValue(key).(string); return s }

func (w *Web) datasetPage(r *req) {
	d, err := w.showDataset(r, pathValue(r, "id"))
	if err != nil {
		w.catalogFail(r, "Dataset", err)
		return
	}
	data := datasetData{D: d, Notes: markdown(d.Notes), CanEdit: w.canUpdate(r, &d), Activity: w.datasetActivity(r, d.ID),
		Versions: w.datasetVersions(r, d.ID)}
	if w.o.Cite != nil {
		if data.Citation = w.o.Cite(r.ctx, d.ID); data.Citation != "" {
			data.CiteFormats = citeLinks()
		}
	}
	w.render(r, fasthttp.StatusOK, "dataset", d.DisplayTitle(), data, w.doneFlash(r), "")
}

// doneFlash is the message of a ?done= redirect after a form.
func (w *Web) doneFlash(r *req) string {
	return map[string]string{
		"created": "Dataset created.", "updated": "Dataset saved.", "deleted": "Dataset deleted.",
		"resource": "Resource added.", "resource_deleted": "Resource deleted.",
	}[string(r.ctx.QueryArgs().Peek("done"))]
}

type orgsData struct {
	Orgs []Organization
	// Section is "organization" or "group": the list's path and words.
	Section string
}

// sectionTitle is the heading of a section's list page.
func sectionTitle(section string) string {
	if section == "group" {
		return "Groups"
	}
	return "Organizations"
}

// orgListPage lists the organizations or the groups (CKAN's
// /organization and /group pages).
func (w *Web) orgListPage(section string) func(*req) {
	return func(r *req) {
		var orgs []Organization
		if err := w.call(r, section+"_list", map[string]any{"all_fields": true, "sort": "title asc"}, &orgs); err != nil {
			w.catalogFail(r, sectionTitle(section), err)
			return
		}
		w.render(r, fasthttp.StatusOK, "organizations", sectionTitle(section), orgsData{Orgs: orgs, Section: section}, "", "")
	}
}

// orgPage shows an organization or a group and searches its datasets.
func (w *Web) orgPage(section string) func(*req) {
	return func(r *req) {
		title := "Organization"
		if section == "group" {
			title = "Group"
		}
		var o Organization
		if err := w.call(r, section+"_show", map[string]any{"id": pathValue(r, "id")}, &o); err != nil {
			w.catalogFail(r, title, err)
			return
		}
		fq := "owner_org:" + strconv.Quote(o.ID)
		if section == "group" {
			fq = "groups:" + strconv.Quote(o.Name)
		}
		d, err := w.search(r, "/"+section+"/"+url.PathEscape(o.Name), fq)
		if err != nil {
			w.catalogFail(r, title, err)
			return
		}
		d.Org, d.OrgName, d.Section = &o, o.Name, section
		if section == "organization" {
			for _, eo := range w.editableOrgs(r) {
				d.CanEdit = d.CanEdit || eo.ID == o.ID
			}
		}
		w.render(r, fasthttp.StatusOK, "organization", o.DisplayTitle(), d, "", "")
	}
}
