package apidocs

// addChem documents GET /chem/resolve, the catalog's compound resolver in
// the gateway's JSON shape.
func addChem(paths obj) {
	paths["/chem/resolve"] = obj{"get": obj{
		"tags": []string{"catalog"}, "operationId": "resolveCompound",
		"summary": "Resolve a compound name, synonym, CAS number (check digit checked), DTXSID, InChIKey or SMILES to its standardized SMILES and identifiers, each with its source, with did-you-mean names",
		"parameters": []obj{{"name": "q", "in": "query", "required": true, "example": "aspirin",
			"schema": obj{"type": "string", "maxLength": 2000}}},
		"responses": obj{
			"200": obj{"description": "OK (compounds is empty, with suggestions, when q names nothing known)",
				"content": obj{"application/json": obj{"schema": obj{"type": "object"}}}},
			"400": ref("ModelError"), "503": ref("ModelError"),
		},
	}}
}
