// Package apidocs serves the gateway's interactive API documentation: an OpenAPI
// 3.1 document at /openapi.json, generated from the catalog actions and from the
// manifest of every loaded module (regenerated when the set of modules changes),
// and Swagger UI at /docs, served from assets embedded in the binary
// (github.com/swaggo/files/v2), with an Authorize dialog for the tokens and "Try
// it out" calling the running server.
package apidocs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"toxgate/plugins/contract"
	"toxgate/sdk/abi"
)

// Action is one catalog action of the CKAN action API (the plugin
// contract's action descriptor; its Description is the summary).
type Action = contract.ActionSpec

// Modules gives the manifests of the loaded modules; generation changes
// whenever the set changes. *modulehost.Host implements it.
type Modules interface {
	Manifests() (generation uint64, manifests []abi.Manifest)
}

// Info is the document's title block.
type Info struct {
	Title, Version, Description string
	// License is the licence of the API; empty fields take
	// DefaultLicense's.
	License License
}

// License is the document's licence: a name, and an SPDX identifier or a
// URL (not both).
type License struct {
	Name, Identifier, URL string
}

// DefaultLicense is the licence the document names when Info gives none:
// the terms of whoever runs the gateway, named by an SPDX user-defined
// reference (the project itself declares no licence).
var DefaultLicense = License{
	Name:       "Terms of use set by the operator of this gateway",
	Identifier: "LicenseRef-toxgate-operator-terms",
}

// OpenAPIVersion is the version of the OpenAPI Specification the document
// follows: 3.1, whose Schema Object is JSON Schema 2020-12, the dialect of
// the modules' schemas (sdk/abi).
const OpenAPIVersion = "3.1.0"

// Security scheme names used in the document.
const (
	SchemeBearer     = "bearerAuth" // Authorization: Bearer <token> (model API, admin)
	SchemeCKANToken  = "ckanToken"  // Authorization: <token> (catalog, as CKAN)
	SchemeCKANAPIKey = "ckanApiKey" // X-CKAN-API-Key: <token> (catalog, legacy CKAN)
)

type obj = map[string]any

// build returns the OpenAPI document.
func build(info Info, actions []Action, manifests []abi.Manifest) obj {
	paths := obj{}
	schemas := obj{
		"ModelError": obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": obj{
			"type": "object", "required": []string{"code", "message"},
			"properties": obj{
				"code":    obj{"type": "string", "examples": []string{"invalid_input"}},
				"message": obj{"type": "string"},
				"field":   obj{"type": "string", "description": "offending input field (dotted path)"},
			}}}},
		"CKANResponse": obj{"type": "object", "properties": obj{
			"help":    obj{"type": "string"},
			"success": obj{"type": "boolean"},
			"result":  obj{},
			"error":   obj{"type": "object", "properties": obj{"__type": obj{"type": "string"}, "message": obj{"type": "string"}}},
		}},
	}
	var tags []obj
	bearer := []obj{{SchemeBearer: []string{}}}

	for _, m := range manifests {
		tag := "model: " + m.Name
		desc := m.Description
		if m.Card.Summary != "" {
			desc += "\n\n**Model card.** " + m.Card.Summary
		}
		if m.Card.Limitations != "" {
			desc += "\n\n**Limitations.** " + m.Card.Limitations
		}
		tags = append(tags, obj{"name": tag, "description": fmt.Sprintf("%s (version %s). %s", firstNonEmpty(m.Title, m.Name), m.Version, desc)})
		for _, r := range m.Routes {
			opID := identifier(m.Name + r.Path)
			in, out := componentName(schemas, opID+"_input"), componentName(schemas, opID+"_output")
			schemas[in] = component(r.InputSchema, in, obj{"type": "object"})
			media := obj{"schema": schemaRef(in)}
			if len(r.Example) > 0 {
				media["example"] = json.RawMessage(r.Example)
			}
			schemas[out] = component(r.Output.Schema, out, obj{"type": "object", "description": r.Output.Description})
			okContent := obj{"application/json": obj{"schema": schemaRef(out)}}
			if r.Output.Table != nil {
				okContent["text/csv"] = obj{"schema": obj{"type": "string"}}
			}
			okDesc := firstNonEmpty(r.Output.Description, "The model's answer")
			if r.Output.Table != nil {
				okDesc += fmt.Sprintf(" (send Accept: text/csv for the table %q as CSV)", r.Output.Table.Field)
			}
			paths[r.Path] = obj{"post": obj{
				"tags":        []string{tag},
				"operationId": opID,
				"summary":     firstNonEmpty(r.Summary, m.Title, m.Name),
				"description": desc,
				"security":    bearer,
				"requestBody": obj{"required": true, "content": obj{"application/json": media}},
				"responses": obj{
					"200": obj{"description": okDesc, "content": okContent},
					"400": ref("ModelError"), "401": ref("ModelError"), "404": ref("ModelError"),
					"413": ref("ModelError"), "415": ref("ModelError"), "422": ref("ModelError"),
					"429": ref("ModelError"), "500": ref("ModelError"), "503": ref("ModelError"),
					"504": ref("ModelError"),
				},
			}}
		}
	}
	addModelIndex(paths, bearer)
	addDCAT(paths)
	if len(actions) > 0 {
		tags = append(tags, obj{"name": "catalog", "description": "CKAN action API v3. Reads are anonymous; writes need a token in Authorization or X-CKAN-API-Key."})
		addActions(paths, actions)
		addChem(paths)
	}
	tags = append(tags,
		obj{"name": "model index", "description": "Loaded models, their schemas and model cards; Open Inference Protocol health and metadata."},
		obj{"name": "admin", "description": "Module management (sysadmin)."},
		obj{"name": "DCAT", "description": "The catalog as DCAT-AP RDF."})
	uniqueOperationIDs(paths)
	return obj{
		"openapi": OpenAPIVersion,
		"info":    obj{"title": info.Title, "version": info.Version, "description": info.Description, "license": licenseObject(info.License)},
		"servers": []obj{{"url": "/"}},
		"tags":    tags,
		"paths":   paths,
		"components": obj{
			"securitySchemes": obj{
				SchemeBearer:     obj{"type": "http", "scheme": "bearer", "description": "API token from the token page (or an OIDC access token): `Authorization: Bearer <token>`. Used by the model API."},
				SchemeCKANToken:  obj{"type": "apiKey", "in": "header", "name": "Authorization", "description": "CKAN style: `Authorization: <token>` (no Bearer prefix). Used by the catalog."},
				SchemeCKANAPIKey: obj{"type": "apiKey", "in": "header", "name": "X-CKAN-API-Key", "description": "Legacy CKAN header: `X-CKAN-API-Key: <token>`. Used by the catalog."},
			},
			"schemas": schemas,
			"responses": obj{
				"ModelError": obj{"description": "Error", "content": obj{"application/json": obj{"schema": schemaRef("ModelError")}}},
			},
		},
	}
}

// licenseObject is the info.license member: l's fields, else
// DefaultLicense's; an identifier wins over a URL (3.1 allows one).
func licenseObject(l License) obj {
	if l.Name == "" {
		l = DefaultLicense
	}
	out := obj{"name": l.Name}
	switch {
	case l.Identifier != "":
		out["identifier"] = l.Identifier
	case l.URL != "":
		out["url"] = l.URL
	}
	return out
}

func schemaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func ref(name string) obj { return obj{"$ref": "#/components/responses/" + name} }

func addModelIndex(paths obj, bearer []obj) {
	nameParam := []obj{{"name": "name", "in": "path", "required": true, "schema": obj{"type": "string"}}}
	get := func(id, summary string, params []obj) obj {
		op := obj{"tags": []string{"model index"}, "operationId": id, "summary": summary, "security": bearer,
			"responses": obj{"200": obj{"description": "OK", "content": obj{"application/json": obj{"schema": obj{"type": "object"}}}}, "404": ref("ModelError"), "503": ref("ModelError")}}
		if params != nil {
			op["parameters"] = params
		}
		return obj{"get": op}
	}
	paths["/models"] = get("listModels", "List loaded models with routes, input schemas, output descriptions, model cards, status and sha256", nil)
	paths["/models/{name}"] = get("getModel", "One model of the index", nameParam)
	paths["/v2/health/live"] = get("oipServerLive", "Liveness (Open Inference Protocol)", nil)
	paths["/v2/health/ready"] = get("oipServerReady", "Readiness: every module file is loaded (Open Inference Protocol)", nil)
	paths["/v2/models/{name}"] = get("oipModelMetadata", "Model metadata (Open Inference Protocol)", nameParam)
	paths["/v2/models/{name}/ready"] = get("oipModelReady", "Model readiness (Open Inference Protocol)", nameParam)
	paths["/admin/modules"] = obj{"post": obj{
		"tags": []string{"admin"}, "operationId": "uploadModule", "summary": "Upload a module (.wasm); it is checked, then replaces the module of the same name", "security": bearer,
		"requestBody": obj{"required": true, "content": obj{"application/wasm": obj{"schema": obj{"type": "string", "contentMediaType": "application/wasm"}}}},
		"responses":   obj{"200": obj{"description": "Already loaded (same sha256)"}, "201": obj{"description": "Loaded"}, "403": ref("ModelError"), "422": ref("ModelError")},
	}}
	paths["/admin/modules/{name}"] = obj{"delete": obj{
		"tags": []string{"admin"}, "operationId": "removeModule", "summary": "Remove a module; calls in flight finish", "security": bearer, "parameters": nameParam,
		"responses": obj{"200": obj{"description": "Removed"}, "403": ref("ModelError"), "404": ref("ModelError")},
	}}
}

func addActions(paths obj, actions []Action) {
	sorted := append([]Action(nil), actions...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	security := []obj{{SchemeCKANToken: []string{}}, {SchemeCKANAPIKey: []string{}}}
	resp := obj{"description": "CKAN envelope {help, success, result} or {help, success:false, error}",
		"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/CKANResponse"}}}}
	responses := obj{"200": resp, "400": resp, "403": resp, "404": resp, "409": resp}
	for _, a := range sorted {
		item := obj{}
		sec := security
		if a.GET {
			sec = append(sec, obj{}) // anonymous reads
			item["get"] = obj{
				"tags": []string{"catalog"}, "operationId": a.Name + "_get", "summary": a.Description, "security": sec,
				"parameters": queryParams(a.Name),
				"responses":  responses,
			}
		}
		schema, example := requestSchema(a.Name)
		item["post"] = obj{
			"tags": []string{"catalog"}, "operationId": a.Name, "summary": a.Description, "security": sec,
			"requestBody": obj{"content": obj{"application/json": obj{"schema": schema, "example": example}}},
			"responses":   responses,
		}
		paths["/api/3/action/"+a.Name] = item
	}
}

// component adapts a module's JSON Schema (2020-12) for the document's
// components under name: "$schema" and "$id" are dropped (the document is
// the schema's base), a reference inside it ("#/$defs/x") is rewritten to
// point into the component, and a number's unit (x-unit) is named in its
// description too, which Swagger UI shows. A missing or unreadable schema
// is fallback.
func component(raw json.RawMessage, name string, fallback obj) any {
	if len(raw) == 0 {
		return fallback
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fallback
	}
	if _, ok := v.(map[string]any); !ok {
		if b, ok := v.(bool); !ok || !b {
			return fallback
		}
	}
	return adapt(v, "#/components/schemas/"+name)
}

func adapt(v any, base string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch k {
			case "$schema", "$id":
				continue
			case "$ref":
				if r, ok := val.(string); ok && strings.HasPrefix(r, "#") {
					out[k] = base + r[1:]
					continue
				}
			case "x-unit":
				if u, ok := val.(string); ok && u != "" {
					d, _ := x["description"].(string)
					if !strings.Contains(d, u) {
						out["description"] = strings.TrimSpace(d + " [" + u + "]")
					}
				}
			}
			if _, done := out[k]; done && k == "description" {
				continue
			}
			out[k] = adapt(val, base)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = adapt(x[i], base)
		}
		return out
	default:
		return v
	}
}

// identifier makes s an operationId or component name: letters, digits
// and "_" (what code generators turn into names), runs of anything else
// one "_", never empty, never starting with a digit.
func identifier(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	id := strings.TrimSuffix(b.String(), "_")
	if id == "" || (id[0] >= '0' && id[0] <= '9') {
		id = "op_" + id
	}
	return id
}

// componentName is name, or name with a number appended when schemas
// already holds it (two modules whose names and paths make one identifier).
func componentName(schemas obj, name string) string {
	if _, taken := schemas[name]; !taken {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s_%d", name, i); schemas[n] == nil {
			return n
		}
	}
}

// methods are the operations of a path item, in a fixed order.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// uniqueOperationIDs gives every operation of paths an operationId that
// no other has: a missing one is made from the method and the path, a
// repeated one gets a number. Paths are visited in order, so the result
// does not depend on map order.
func uniqueOperationIDs(paths obj) {
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, p := range keys {
		item, _ := paths[p].(obj)
		for _, m := range methods {
			op, ok := item[m].(obj)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				id = identifier(m + p)
			}
			if seen[id] {
				n := 2
				for seen[fmt.Sprintf("%s_%d", id, n)] {
					n++
				}
				id = fmt.Sprintf("%s_%d", id, n)
			}
			seen[id] = true
			op["operationId"] = id
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
