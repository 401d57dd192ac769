package apidocs

// parityFields documents collaborators, package_revise, resource_search,
// the autocompletes and the bulk actions (added to actionFields).
var parityFields = map[string][]field{
	"package_revise": {
		f("match", "object", `fields the dataset must have, e.g. {"id": "herg-data", "notes": "old"}`),
		f("filter", "array", `glob patterns of fields to remove first, e.g. ["-resources__0"]`),
		f("update", "object", `fields to set, e.g. {"notes": "new"}`),
		f("include", "array", `glob patterns of the reply, e.g. ["-*"]`),
		f("match__id", "string", "flattened keys: match__<path>, update__<path> (update__resources__extend adds resources)"),
	},
	"package_collaborator_create": {idField, req("user_id", "string", "user name or id", "mia"),
		req("capacity", "string", "member (reads) or editor (also edits); admin with catalog.allow_admin_collaborators", "editor")},
	"package_collaborator_list":          {idField, f("capacity", "string", "only this capacity")},
	"package_collaborator_delete":        {idField, req("user_id", "string", "user name or id", "mia")},
	"package_collaborator_list_for_user": {req("id", "string", "user name or id (yourself, unless sysadmin)", "mia"), f("capacity", "string", "only this capacity")},
	"resource_search": {req("query", "string", "field:term, or a list of them (ANDed)", "format:csv"),
		f("order_by", "string", "a resource field"), f("offset", "integer", "first result"), f("limit", "integer", "results")},
	"package_autocomplete":                {req("q", "string", "part of a name or title", "herg"), f("limit", "integer", "results (default 10)")},
	"format_autocomplete":                 {req("q", "string", "part of a format", "cs"), f("limit", "integer", "results (default 5)")},
	"organization_autocomplete":           {req("q", "string", "part of a name or title", "tox"), f("limit", "integer", "results (default 20)")},
	"current_package_list_with_resources": {f("limit", "integer", "page size (default 10)"), f("offset", "integer", "page start")},
	"group_autocomplete":                  {req("q", "string", "part of a name or title", "hepato"), f("limit", "integer", "results (default 20)")},
	"group_package_show":                  {idField, f("limit", "integer", "results (default 10)")},
	"tag_search":                          tagSearchFields,
	"tag_autocomplete":                    tagSearchFields,
	"bulk_update_private":                 bulkFields,
	"bulk_update_public":                  bulkFields,
	"bulk_update_delete":                  bulkFields,
	"organization_purge":                  {idField},
	"package_resource_reorder":            {idField, req("order", "array", "resource ids first, the others keep their order", []string{})},
	"package_owner_org_update":            {idField, req("organization_id", "string", "organization id or name", "tox-lab")},
}

var tagSearchFields = []field{req("query", "string", "part of a tag name, or a list of them (ANDed)", "hepato"),
	f("vocabulary_id", "string", "search this vocabulary's tags (id or name) instead of the free tags"),
	f("limit", "integer", "results"), f("offset", "integer", "first result")}

var bulkFields = []field{req("org_id", "string", "organization id or name", "tox-lab"), req("datasets", "array", "ids of the organization's datasets", []string{})}

func init() {
	for name, fields := range parityFields {
		actionFields[name] = fields
	}
}
