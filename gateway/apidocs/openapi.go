// Package apidocs serves the gateway's interactive API documentation: an OpenAPI
// 3.0 document at /openapi.json, generated from the catalog actions and from the
// manifest of every loaded module (regenerated when the set of modules changes),
// and Swagger UI at /docs, served from assets embedded in the binary
// (github.com/swaggo/files), with an Authorize dialog for the tokens and "Try it
// out" calling the running server.
package apidocs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"toxgate/sdk/abi"
)

// Action is one catalog action of the CKAN action API.
type Action struct {
	// Name is the action name, e.g. "package_show".
	Name string
	// GET is true for read actions, which accept GET as well as POST.
	GET bool
	// Summary is one line for the documentation.
	Summary string
}

// Modules gives the manifests of the loaded modules; generation changes
// whenever the set changes. *modulehost.Host implements it.
type Modules interface {
	Manifests() (generation uint64, manifests []abi.Manifest)
}

// Info is the document's title block.
type Info struct {
	Title, Version, Description string
}

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
			schema := toOAS30(r.InputSchema)
			media := obj{"schema": schema}
			if len(r.Example) > 0 {
				media["example"] = json.RawMessage(r.Example)
			}
			okContent := obj{"application/json": obj{"schema": outputSchema(r.Output)}}
			if r.Output.Table != nil {
				okContent["text/csv"] = obj{"schema": obj{"type": "string"}}
			}
			okDesc := r.Output.Description
			if r.Output.Table != nil {
				okDesc += fmt.Sprintf(" (send Accept: text/csv for the table %q as CSV)", r.Output.Table.Field)
			}
			paths[r.Path] = obj{"post": obj{
				"tags":        []string{tag},
				"operationId": m.Name + strings.ReplaceAll(r.Path, "/", "_"),
				"summary":     firstNonEmpty(r.Summary, m.Title, m.Name),
				"description": desc,
				"security":    bearer,
				"requestBody": obj{"required": true, "content": obj{"application/json": media}},
				"responses": obj{
					"200": obj{"description": okDesc, "content": okContent},
					"400": ref("ModelError"), "401": ref("ModelError"), "404": ref("ModelError"),
					"413": ref("ModelError"), "415": ref("ModelError"), "422": ref("ModelError"),
					"500": ref("ModelError"), "503": ref("ModelError"), "504": ref("ModelError"),
				},
			}}
		}
	}
	addModelIndex(paths, bearer)
	addDCAT(paths)
	if len(actions) > 0 {
		tags = append(tags, obj{"name": "catalog", "description": "CKAN action API v3. Reads are anonymous; writes need a token in Authorization or X-CKAN-API-Key."})
		addActions(paths, actions)
	}
	tags = append(tags,
		obj{"name": "model index", "description": "Loaded models, their schemas and model cards; Open Inference Protocol health and metadata."},
		obj{"name": "admin", "description": "Module management (sysadmin)."})
	return obj{
		"openapi": "3.0.3",
		"info":    obj{"title": info.Title, "version": info.Version, "description": info.Description},
		"servers": []obj{{"url": "/"}},
		"tags":    tags,
		"paths":   paths,
		"components": obj{
			"securitySchemes": obj{
				SchemeBearer:     obj{"type": "http", "scheme": "bearer", "description": "API token from the token page (or an OIDC access token): `Authorization: Bearer <token>`. Used by the model API."},
				SchemeCKANToken:  obj{"type": "apiKey", "in": "header", "name": "Authorization", "description": "CKAN style: `Authorization: <token>` (no Bearer prefix). Used by the catalog."},
				SchemeCKANAPIKey: obj{"type": "apiKey", "in": "header", "name": "X-CKAN-API-Key", "description": "Legacy CKAN header: `X-CKAN-API-Key: <token>`. Used by the catalog."},
			},
			"schemas": obj{
				"ModelError": obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": obj{
					"type": "object", "required": []string{"code", "message"},
					"properties": obj{
						"code":    obj{"type": "string", "example": "invalid_input"},
						"message": obj{"type": "string"},
						"field":   obj{"type": "string", "description": "offending input field (dotted path)"},
					}}}},
				"CKANResponse": obj{"type": "object", "properties": obj{
					"help":    obj{"type": "string"},
					"success": obj{"type": "boolean"},
					"result":  obj{},
					"error":   obj{"type": "object", "properties": obj{"__type": obj{"type": "string"}, "message": obj{"type": "string"}}},
				}},
			},
			"responses": obj{
				"ModelError": obj{"description": "Error", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/ModelError"}}}},
			},
		},
	}
}

func ref(name string) obj { return obj{"$ref": "#/components/responses/" + name} }

func addModelIndex(paths obj, bearer []obj) {
	nameParam := []obj{{"name": "name", "in": "path", "required": true, "schema": obj{"type": "string"}}}
	get := func(summary string, params []obj) obj {
		op := obj{"tags": []string{"model index"}, "summary": summary, "security": bearer,
			"responses": obj{"200": obj{"description": "OK", "content": obj{"application/json": obj{"schema": obj{"type": "object"}}}}, "404": ref("ModelError"), "503": ref("ModelError")}}
		if params != nil {
			op["parameters"] = params
		}
		return obj{"get": op}
	}
	paths["/models"] = get("List loaded models with routes, input schemas, output descriptions, model cards, status and sha256", nil)
	paths["/models/{name}"] = get("One model of the index", nameParam)
	paths["/v2/health/live"] = get("Liveness (Open Inference Protocol)", nil)
	paths["/v2/health/ready"] = get("Readiness: every module file is loaded (Open Inference Protocol)", nil)
	paths["/v2/models/{name}"] = get("Model metadata (Open Inference Protocol)", nameParam)
	paths["/v2/models/{name}/ready"] = get("Model readiness (Open Inference Protocol)", nameParam)
	paths["/admin/modules"] = obj{"post": obj{
		"tags": []string{"admin"}, "summary": "Upload a module (.wasm); it is checked, then replaces the module of the same name", "security": bearer,
		"requestBody": obj{"required": true, "content": obj{"application/wasm": obj{"schema": obj{"type": "string", "format": "binary"}}}},
		"responses":   obj{"200": obj{"description": "Already loaded (same sha256)"}, "201": obj{"description": "Loaded"}, "403": ref("ModelError"), "422": ref("ModelError")},
	}}
	paths["/admin/modules/{name}"] = obj{"delete": obj{
		"tags": []string{"admin"}, "summary": "Remove a module; calls in flight finish", "security": bearer, "parameters": nameParam,
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
				"tags": []string{"catalog"}, "operationId": a.Name + "_get", "summary": a.Summary, "security": sec,
				"parameters": queryParams(a.Name),
				"responses":  responses,
			}
		}
		schema, example := requestSchema(a.Name)
		item["post"] = obj{
			"tags": []string{"catalog"}, "operationId": a.Name, "summary": a.Summary, "security": sec,
			"requestBody": obj{"content": obj{"application/json": obj{"schema": schema, "example": example}}},
			"responses":   responses,
		}
		paths["/api/3/action/"+a.Name] = item
	}
}

// outputSchema is the declared output schema, or an object.
func outputSchema(o abi.Output) any {
	if len(o.Schema) > 0 {
		return toOAS30(o.Schema)
	}
	return obj{"type": "object", "description": o.Description}
}

// toOAS30 adapts a JSON Schema (2020-12) to the OpenAPI 3.0 schema dialect
// that Swagger UI renders: "examples" becomes "example", "const" an enum,
// "$schema" and "$id" are dropped.
func toOAS30(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return obj{"type": "object"}
	}
	return adapt(v)
}

func adapt(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch k {
			case "$schema", "$id":
				continue
			case "examples":
				if arr, ok := val.([]any); ok && len(arr) > 0 {
					out["example"] = adapt(arr[0])
				}
				continue
			case "const":
				out["enum"] = []any{val}
				continue
			case "x-unit":
				// Swagger UI shows descriptions, not extensions: name the unit there too.
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
			out[k] = adapt(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = adapt(x[i])
		}
		return out
	default:
		return v
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
