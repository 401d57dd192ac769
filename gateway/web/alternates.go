package web

import "net/url"

// Alternate is another representation of a page, advertised in its head as
// <link rel="alternate"> (as ckanext-dcat advertises its RDF endpoints).
type Alternate struct{ Type, Href string }

// alternates are the DCAT serialisations of the dataset page and of the
// dataset search, when the gateway serves them (Options.DatasetAs set).
func (w *Web) alternates(page string, data any) []Alternate {
	if w.o.DatasetAs == nil {
		return nil
	}
	base := ""
	switch page {
	case "dataset":
		d, ok := data.(datasetData)
		if !ok || d.D.Name == "" {
			return nil
		}
		base = "/dataset/" + url.PathEscape(d.D.Name)
	case "dataset_search":
		base = "/catalog"
	default:
		return nil
	}
	return []Alternate{{"text/turtle", base + ".ttl"}, {"application/ld+json", base + ".jsonld"}, {"application/rdf+xml", base + ".xml"}}
}
