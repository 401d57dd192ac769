package apidocs

import "strings"

// field is one documented parameter of a CKAN action.
type field struct {
	name, typ, desc string
	required        bool
	example         any
}

// f is a shorthand for an optional field.
func f(name, typ, desc string) field { return field{name: name, typ: typ, desc: desc} }

// Examples of ids in the documented requests (the form CKAN's ids have).
const (
	exampleResourceID = "3f6c2a1e-9b4d-4e7a-8c15-2d0b7e9f4a61"
	exampleActivityID = "b7e2d9c4-1a3f-4c8e-9d60-5f2a8b1c3e47"
)

// req is a shorthand for a required field; its example goes into the
// action's request example, which must satisfy the schema.
func req(name, typ, desc string, example any) field {
	return field{name: name, typ: typ, desc: desc, required: true, example: example}
}

var (
	idField       = req("id", "string", "id or name", "herg-data")
	datasetFields = []field{
		req("name", "string", "URL name: 2–100 lower-case letters, digits, - and _", "herg-data"),
		f("title", "string", "title (default: name)"),
		f("owner_org", "string", "organization id or name (required unless the site allows datasets without one)"),
		f("private", "boolean", "visible to the organization's members only (default false)"),
		f("notes", "string", "description (Markdown)"),
		f("tags", "array", "tags: [{name, vocabulary_id}]"),
		f("extras", "array", "custom fields: [{key, value}]"),
		f("resources", "array", "resources: [{url, name, format, description, ...}]"),
		f("license_id", "string", "license id (license_list)"),
		f("author", "string", "author"), f("author_email", "string", "author's e-mail"),
		f("maintainer", "string", "maintainer"), f("maintainer_email", "string", "maintainer's e-mail"),
		f("version", "string", "version"), f("url", "string", "source URL"), f("state", "string", "active or draft"),
	}
	resourceFields = []field{
		req("package_id", "string", "dataset id or name", "herg-data"),
		f("url", "string", "link to the data (or empty with a multipart upload field)"),
		f("upload", "string", "multipart/form-data file field: the file is stored by the gateway (FileStore)"),
		f("name", "string", "name"), f("description", "string", "description (Markdown)"),
		f("format", "string", "format, e.g. CSV (guessed from the file name when empty)"),
		f("mimetype", "string", "media type"),
	}
	orgFields = []field{
		req("name", "string", "URL name", "tox-lab"), f("title", "string", "title"), f("description", "string", "description"),
		f("image_url", "string", "logo URL"), f("users", "array", "members: [{name, capacity}]"), f("extras", "array", "custom fields"),
	}
	datastoreFilters = f("filters", "object", "equality filters {field: value or [values]}")
	// activityListFields are the paging and filters of the activity lists.
	activityListFields = []field{
		f("offset", "integer", "first activity (default 0)"), f("limit", "integer", "activities (default 31, at most 100)"),
		f("after", "number", "only after this time (seconds since the epoch)"), f("before", "number", "only before this time (seconds since the epoch)"),
		f("activity_types", "array", `only these types, e.g. ["new package"]`), f("exclude_activity_types", "array", "not these types"),
		f("include_hidden_activity", "boolean", "also the site's own activity (sysadmins)"),
	}
)

// actionFields documents the request fields of the common CKAN actions
// (CKAN's API reference); actions not listed get an open object.
var actionFields = map[string][]field{
	"package_list":   {f("limit", "integer", "page size"), f("offset", "integer", "page start")},
	"package_show":   {idField, f("include_tracking", "boolean", "ignored")},
	"package_create": datasetFields,
	"package_update": append([]field{idField}, datasetFields[1:]...),
	"package_patch":  append([]field{idField}, datasetFields[1:]...),
	"package_delete": {idField},
	"dataset_purge":  {idField},
	"package_search": {
		f("q", "string", "query (Solr/Lucene syntax: words, field:value, AND/OR, quotes)"),
		f("fq", "string", "filter query, e.g. organization:tox-lab tags:herg"),
		f("sort", "string", "e.g. score desc, metadata_modified desc"),
		f("rows", "integer", "page size (default 10, at most 1000)"), f("start", "integer", "offset"),
		f("facet.field", "array", `fields to facet on, e.g. ["organization","tags","res_format"]`),
		f("facet.limit", "integer", "values per facet (default 50)"), f("facet.mincount", "integer", "smallest count shown"),
		f("include_private", "boolean", "also private datasets the caller may read"),
		f("include_drafts", "boolean", "also the caller's drafts"), f("fl", "string", "fields of each result"),
	},
	"resource_show":   {req("id", "string", "resource id", exampleResourceID)},
	"resource_create": resourceFields,
	"resource_update": append([]field{req("id", "string", "resource id", exampleResourceID)}, resourceFields[1:]...),
	"resource_patch":  append([]field{req("id", "string", "resource id", exampleResourceID)}, resourceFields[1:]...),
	"resource_delete": {req("id", "string", "resource id", exampleResourceID)},
	"organization_list": {f("all_fields", "boolean", "full dictionaries instead of names"), f("sort", "string", "e.g. title asc"),
		f("limit", "integer", "page size"), f("offset", "integer", "page start")},
	"organization_show":   {idField, f("include_datasets", "boolean", "list the datasets"), f("include_users", "boolean", "list the members")},
	"organization_create": orgFields,
	"organization_update": append([]field{idField}, orgFields[1:]...),
	"organization_delete": {idField},
	"organization_member_create": {idField, req("username", "string", "user name or id", "mia"),
		req("role", "string", "admin, editor or member", "editor")},
	"organization_member_delete": {idField, req("username", "string", "user name or id", "mia")},
	"group_show":                 {idField, f("include_datasets", "boolean", "list the datasets"), f("include_users", "boolean", "list the members")},
	"group_create":               orgFields,
	"group_member_create": {idField, req("username", "string", "user name or id", "mia"),
		req("role", "string", "admin, editor or member", "member")},
	"member_create": {req("id", "string", "group name or id", "hepatotox"), req("object", "string", "dataset or user name or id", "liver-slices"),
		req("object_type", "string", "package or user", "package"), req("capacity", "string", "public for a dataset, a role for a user", "public")},
	"vocabulary_create":          {req("name", "string", "vocabulary name", "toxin"), f("tags", "array", `[{"name": "microcystin"}]`)},
	"tag_create":                 {req("name", "string", "tag name", "microcystin"), req("vocabulary_id", "string", "vocabulary id or name", "compound-classes")},
	"tag_show":                   {req("id", "string", "tag id or name", "microcystin"), f("vocabulary_id", "string", "vocabulary id or name"), f("include_datasets", "boolean", "list its public datasets")},
	"organization_list_for_user": {f("id", "string", "user (default: the caller)"), f("permission", "string", "manage_group (default), create_dataset, read, ...")},
	"member_list":                {idField, f("object_type", "string", "package or user"), f("capacity", "string", "role")},
	"tag_list":                   {f("query", "string", "tags starting with"), f("vocabulary_id", "string", "vocabulary")},

	// the activity stream (ckanext-activity)
	"package_activity_list":                   append([]field{idField}, activityListFields...),
	"organization_activity_list":              append([]field{req("id", "string", "organization id or name", "tox-lab")}, activityListFields...),
	"group_activity_list":                     append([]field{req("id", "string", "group id or name", "hepatotox")}, activityListFields...),
	"user_activity_list":                      append([]field{req("id", "string", "user id or name", "mia")}, activityListFields[:4]...),
	"recently_changed_packages_activity_list": activityListFields[:2],
	"dashboard_activity_list":                 activityListFields[:4],
	"activity_show":                           {req("id", "string", "activity id", exampleActivityID)},
	"activity_data_show":                      {req("id", "string", "activity id", exampleActivityID), f("object_type", "string", "package, organization or group: that member of data")},
	"activity_diff": {req("id", "string", "activity id", exampleActivityID), req("object_type", "string", "package, organization or group", "package"),
		f("diff_type", "string", "unified (default), context or html")},

	"user_show": {idField},
	"user_create": {req("name", "string", "user name", "mia"), req("email", "string", "e-mail", "mia@example.org"),
		req("password", "string", "initial password", "initial-pass-1"), f("fullname", "string", "full name"),
		f("first_name", "string", "first name"), f("last_name", "string", "last name"), f("roles", "array", "gateway roles, e.g. [\"models\"]")},
	"user_update":      {idField, f("email", "string", "e-mail"), f("fullname", "string", "full name"), f("password", "string", "new password")},
	"user_patch":       {idField, f("email", "string", "e-mail"), f("fullname", "string", "full name"), f("about", "string", "about the user")},
	"user_list":        {f("q", "string", "names containing"), f("order_by", "string", "name (default)")},
	"api_token_create": {req("user", "string", "user name or id", "mia"), req("name", "string", "token name", "laptop"), f("expires_in", "integer", "lifetime (with unit)"), f("unit", "integer", "seconds per expires_in unit")},
	"api_token_list":   {f("user_id", "string", "user (default: the caller)")},
	"api_token_revoke": {f("token", "string", "the token"), f("jti", "string", "the token's id")},
	"datastore_search": {req("resource_id", "string", "resource id", exampleResourceID), datastoreFilters, f("q", "string", "full-text query"),
		f("fields", "array", "fields to return"), f("sort", "string", "e.g. field desc"), f("limit", "integer", "rows (default 100)"),
		f("offset", "integer", "first row"), f("include_total", "boolean", "count the matches (default true)"),
		f("records_format", "string", "objects (default), lists, csv or tsv"), f("distinct", "boolean", "distinct rows")},
	"datastore_create": {f("resource_id", "string", "resource id (or resource)"), f("resource", "object", "a resource to create: {package_id, name, ...}"),
		f("fields", "array", "[{id, type}]"), f("records", "array", "rows as objects"), f("primary_key", "array", "key fields"),
		f("indexes", "array", "indexed fields")},
	"datastore_upsert": {req("resource_id", "string", "resource id", exampleResourceID), f("records", "array", "rows as objects"),
		f("method", "string", "upsert (default), insert or update"), f("dry_run", "boolean", "check only")},
	"datastore_delete":     {req("resource_id", "string", "resource id", exampleResourceID), datastoreFilters},
	"datastore_info":       {req("id", "string", "resource id", exampleResourceID)},
	"datastore_search_sql": {req("sql", "string", "one SELECT on DataStore tables (the resource ids)", `SELECT * FROM "`+exampleResourceID+`" LIMIT 5`)},

	"compound_resolve": {req("q", "string", "a name, synonym, CAS number, DTXSID, InChIKey or SMILES (or a list of identifiers, at most 10,000, resolved without SMILES parsing)", "aspirin")},
	"structure_search": {req("smiles", "string", "a SMILES or a resolvable name or identifier (in substructure mode a molecule pattern; not needed with smarts)", "CC(=O)Oc1ccccc1C(=O)O"),
		f("smarts", "string", "a SMARTS pattern (substructure mode, the default when given)"),
		f("mode", "string", "similarity (default), exact or substructure"), f("threshold", "number", "least Tanimoto similarity, 0.05 to 1 (default 0.7)"),
		f("limit", "integer", "most rows answered (default 20, at most 1000)")},
	"compound_dictionary_register": {req("resource_id", "string", "resource id of a DataStore table of compounds", exampleResourceID),
		f("registered", "boolean", "false unregisters (default true)")},
}

// requestSchema is an action's request body schema and example.
func requestSchema(action string) (schema, example obj) {
	fields, ok := actionFields[action]
	if !ok {
		return obj{"type": "object", "description": "action parameters (see CKAN's API reference)"}, obj{}
	}
	props := obj{}
	var required []string
	example = obj{}
	for _, fd := range fields {
		p := obj{"type": fd.typ, "description": fd.desc}
		switch fd.typ {
		case "array":
			p["items"] = obj{}
		case "object":
			p["additionalProperties"] = true
		}
		props[fd.name] = p
		if fd.required {
			required = append(required, fd.name)
			example[fd.name] = fd.example
		}
	}
	schema = obj{"type": "object", "properties": props, "additionalProperties": true}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema, example
}

// queryParams lists an action's fields as GET query parameters.
func queryParams(action string) []obj {
	fields, ok := actionFields[action]
	if !ok {
		return []obj{{"name": "params", "in": "query", "required": false, "style": "form", "explode": true,
			"schema": obj{"type": "object", "additionalProperties": obj{"type": "string"}}, "description": "action parameters as query string"}}
	}
	out := make([]obj, 0, len(fields))
	for _, fd := range fields {
		typ := fd.typ
		desc := fd.desc
		if typ == "array" || typ == "object" {
			typ, desc = "string", strings.TrimSpace(desc+" (JSON)")
		}
		out = append(out, obj{"name": fd.name, "in": "query", "required": fd.required, "description": desc, "schema": obj{"type": typ}})
	}
	return out
}
