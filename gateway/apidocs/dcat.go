package apidocs

// addDCAT documents the catalog's DCAT-AP endpoints (gateway/dcat).
func addDCAT(paths obj) {
	security := []obj{{}, {SchemeCKANToken: []string{}}, {SchemeCKANAPIKey: []string{}}}
	rdf := obj{}
	for _, mt := range []string{"text/turtle", "application/ld+json", "application/rdf+xml"} {
		rdf[mt] = obj{"schema": obj{"type": "string"}}
	}
	query := func(name, desc string) obj {
		return obj{"name": name, "in": "query", "schema": obj{"type": "string"}, "description": desc}
	}
	catalogParams := []obj{
		{"name": "page", "in": "query", "schema": obj{"type": "integer", "minimum": 1}, "description": "page (catalog.dcat_per_page datasets each)"},
		query("modified_since", "only datasets modified since this ISO 8601 date or date-time"),
		query("q", "search query, as package_search"),
		query("fq", "filter query, as package_search"),
	}
	errs := obj{"400": obj{"description": "Bad parameter"}, "404": obj{"description": "Past the last page, or no such dataset the caller may read"}}
	op := func(id, summary string, params []obj) obj {
		responses := obj{"200": obj{"description": "DCAT-AP 3 RDF", "content": rdf}}
		for k, v := range errs {
			responses[k] = v
		}
		return obj{"get": obj{"tags": []string{"DCAT"}, "operationId": id, "summary": summary, "security": security, "parameters": params, "responses": responses}}
	}
	for _, ext := range []string{"ttl", "jsonld", "xml"} {
		paths["/catalog."+ext] = op("dcatCatalog_"+ext, "The catalog as DCAT-AP, paged with Hydra (what the caller may read)", catalogParams)
	}
	paths["/catalog"] = op("dcatCatalog", "The catalog as DCAT-AP; the syntax by format=ttl|jsonld|xml or the Accept header",
		append([]obj{query("format", "ttl, jsonld, xml, rdf or n3")}, catalogParams...))
	idParam := []obj{{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string"}, "description": "dataset id or name"}}
	for _, ext := range []string{"ttl", "jsonld", "xml"} {
		paths["/dataset/{id}."+ext] = op("dcatDataset_"+ext, "One dataset as DCAT-AP (also /dataset/{id} with an RDF Accept header)", idParam)
	}
}
