// Package croissant describes a catalog dataset in MLCommons Croissant 1.0
// (JSON-LD on schema.org): its metadata, one FileObject per resource and
// one RecordSet per DataStore table, with a Field per column. It is served
// at ckanext-dcat's path, /dataset/{id}/croissant.jsonld.
package croissant

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"toxgate/gateway/dcat"
)

// ConformsTo is the Croissant version the documents declare.
const ConformsTo = "http://mlcommons.org/croissant/1.0"

// jsonldContext is Croissant 1.0's JSON-LD context (the terms of the Croissant
// 1.0 specification, mlcommons.org/croissant), written inline so that a
// reader resolves every term without fetching anything.
var jsonldContext = map[string]any{
	"@language": "en", "@vocab": "https://schema.org/", "sc": "https://schema.org/",
	"cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/", "dct": "http://purl.org/dc/terms/",
	"citeAs": "cr:citeAs", "column": "cr:column", "conformsTo": "dct:conformsTo",
	"data": map[string]any{"@id": "cr:data", "@type": "@json"}, "dataType": map[string]any{"@id": "cr:dataType", "@type": "@vocab"},
	"examples": map[string]any{"@id": "cr:examples", "@type": "@json"},
	"extract":  "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject",
	"fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
	"jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path",
	"recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated",
	"replace": "cr:replace", "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField",
	"transform": "cr:transform",
}

// Table is a DataStore table as datastore_info describes it.
type Table struct {
	// ResourceID is the resource whose rows the table holds.
	ResourceID string
	Fields     []Field  `json:"fields"`
	PrimaryKey []string `json:"primary_key"`
}

// Field is one column of a table.
type Field struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Info struct {
		Label string `json:"label"`
		Notes string `json:"notes"`
	} `json:"info"`
}

// Doc is what a Croissant document is made of.
type Doc struct {
	Package *dcat.Package
	// Site is the site's public base URL; Publisher its title.
	Site, Publisher string
	// Version names the version described ("" for the dataset now).
	Version string
	// Tables are the DataStore tables of the package's resources.
	Tables []Table
	// CiteAs is the citation (BibTeX, as Croissant's examples give it).
	CiteAs string
	// Creators are the work's authors (names; Organization marks a corporate one).
	Creators []Creator
	// DatePublished is the work's date (YYYY-MM-DD).
	DatePublished string
}

// Creator is an author as Croissant lists it.
type Creator struct {
	Name         string
	Organization bool
}

// Render writes d as a Croissant 1.0 JSON-LD document.
func Render(d Doc) []byte {
	pkg := d.Package
	landing := d.Site + "/dataset/" + url.PathEscape(pkg.Name)
	if d.Version != "" {
		landing += "?version=" + url.QueryEscape(d.Version)
	}
	doc := map[string]any{
		"@context": jsonldContext, "@type": "sc:Dataset", "conformsTo": ConformsTo,
		"name": firstNonEmpty(pkg.Title, pkg.Name), "url": landing, "identifier": pkg.ID,
		"description": firstNonEmpty(deref(pkg.Notes), firstNonEmpty(pkg.Title, pkg.Name)),
	}
	if d.CiteAs != "" {
		doc["citeAs"] = d.CiteAs
	}
	if v := firstNonEmpty(d.Version, deref(pkg.Version)); v != "" {
		doc["version"] = v
	}
	if d.DatePublished != "" {
		doc["datePublished"] = d.DatePublished
	}
	if len(pkg.MetadataModified) >= 10 {
		doc["dateModified"] = pkg.MetadataModified[:10]
	}
	if pkg.LicenseURL != "" {
		doc["license"] = pkg.LicenseURL
	} else if l := deref(pkg.LicenseTitle); l != "" {
		doc["license"] = l
	}
	var creators []any
	for _, c := range d.Creators {
		t := "sc:Person"
		if c.Organization {
			t = "sc:Organization"
		}
		creators = append(creators, map[string]any{"@type": t, "name": c.Name})
	}
	if len(creators) > 0 {
		doc["creator"] = creators
	}
	doc["publisher"] = map[string]any{"@type": "sc:Organization", "name": d.Publisher, "url": d.Site}
	var kw []string
	for _, t := range pkg.Tags {
		kw = append(kw, t.Name)
	}
	if len(kw) > 0 {
		doc["keywords"] = kw
	}
	dist := []any{}
	ids := map[string]bool{}
	for _, r := range pkg.Resources {
		if r.URL == "" {
			continue
		}
		ids[r.ID] = true
		fo := map[string]any{"@type": "cr:FileObject", "@id": r.ID, "name": firstNonEmpty(deref(r.Name), r.ID),
			"contentUrl": r.URL, "encodingFormat": firstNonEmpty(deref(r.Mimetype), mimeOf(r.Format))}
		if d := deref(r.Description); d != "" {
			fo["description"] = d
		}
		if r.Size != nil && *r.Size >= 0 {
			fo["contentSize"] = strconv.FormatInt(*r.Size, 10) + " B"
		}
		if h, ok := strings.CutPrefix(r.Hash, "sha256:"); ok && len(h) == 64 {
			fo["sha256"] = h
		}
		dist = append(dist, fo)
	}
	doc["distribution"] = dist
	var sets []any
	for _, t := range d.Tables {
		if !ids[t.ResourceID] {
			continue
		}
		rsID := t.ResourceID + "/records"
		var fields []any
		for _, f := range t.Fields {
			if f.ID == "_id" {
				continue
			}
			dt, repeated := dataType(f.Type)
			fd := map[string]any{"@type": "cr:Field", "@id": rsID + "/" + f.ID, "name": f.ID, "dataType": dt,
				"source": map[string]any{"fileObject": map[string]any{"@id": t.ResourceID}, "extract": map[string]any{"column": f.ID}}}
			if repeated {
				fd["repeated"] = true
			}
			if desc := firstNonEmpty(f.Info.Notes, f.Info.Label); desc != "" {
				fd["description"] = desc
			}
			fields = append(fields, fd)
		}
		rs := map[string]any{"@type": "cr:RecordSet", "@id": rsID, "name": rsID, "field": fields}
		if len(t.PrimaryKey) > 0 {
			var keys []any
			for _, k := range t.PrimaryKey {
				keys = append(keys, map[string]any{"@id": rsID + "/" + k})
			}
			rs["key"] = keys
		}
		sets = append(sets, rs)
	}
	if len(sets) > 0 {
		doc["recordSet"] = sets
	}
	out, _ := json.MarshalIndent(doc, "", "  ") // cannot fail: plain types
	return append(out, '\n')
}

// dataType maps a DataStore column type to a Croissant data type; an
// array type ("_int4", "text[]") is a repeated field of its element type.
func dataType(t string) (string, bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	repeated := false
	if s, ok := strings.CutPrefix(t, "_"); ok {
		t, repeated = s, true
	}
	if s, ok := strings.CutSuffix(t, "[]"); ok {
		t, repeated = s, true
	}
	switch t {
	case "int", "int2", "int4", "int8", "integer", "bigint", "smallint":
		return "sc:Integer", repeated
	case "float", "float4", "float8", "numeric", "real", "double precision", "number":
		return "sc:Float", repeated
	case "bool", "boolean":
		return "sc:Boolean", repeated
	case "timestamp", "timestamptz", "datetime":
		return "sc:DateTime", repeated
	case "date":
		return "sc:Date", repeated
	case "time":
		return "sc:Time", repeated
	}
	return "sc:Text", repeated
}

// mimeOf guesses a media type from a CKAN format label.
func mimeOf(format string) string {
	switch strings.ToLower(format) {
	case "csv":
		return "text/csv"
	case "tsv":
		return "text/tab-separated-values"
	case "json":
		return "application/json"
	case "xlsx":
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case "parquet":
		return "application/vnd.apache.parquet"
	}
	return "application/octet-stream"
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return strings.TrimSpace(a)
	}
	return strings.TrimSpace(b)
}
