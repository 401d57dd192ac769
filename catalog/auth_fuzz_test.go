package catalog

import (
	"context"
	"errors"
	"sort"
	"testing"

	"toxgate/catalog/ckan"
)

// FuzzCheckAccess sends hostile data dicts to every auth function as
// every role of the matrix: each answers allowed or a CKAN error (never a
// panic, never a 5xx); an anonymous caller passes no action that needs a
// login; and, with the default switches, neither an anonymous caller nor a
// user in no organization may run any write action.
func FuzzCheckAccess(f *testing.F) {
	m := newMatrixFixture(f)
	names := make([]string, 0, len(authTable))
	for name := range authTable {
		names = append(names, name)
	}
	sort.Strings(names)
	index := map[string]uint16{}
	for i, n := range names {
		index[n] = uint16(i)
	}
	seed := func(action string, role uint8, data string) { f.Add(index[action], role, []byte(data)) }
	seed("package_show", 0, `{"id":"priv"}`)
	seed("package_patch", 1, `{"id":"priv","owner_org":"other-lab"}`)
	seed("package_update", 0, `{"name":"pub"}`)
	seed("package_revise", 1, `{"match__id":"priv","update":{"notes":1}}`)
	seed("package_revise", 0, `{"match":"[1,2]"}`)
	seed("package_resource_reorder", 1, `{"id":["pub"],"order":{"a":1}}`)
	seed("resource_create", 0, `{"package_id":{"$ne":null}}`)
	seed("datastore_create", 1, `{"resource":{"package_id":"priv"}}`)
	seed("datastore_create", 0, `{"resource":{}}`)
	seed("member_create", 1, `{"id":"tox-group","object":"priv","object_type":"package","capacity":"public"}`)
	seed("bulk_update_delete", 1, `{"org_id":"tox-lab","datasets":"[\"pub\"]"}`)
	seed("activity_diff", 0, `{"id":null,"object_type":[]}`)
	seed("organization_member_create", 1, `{"id":"tox-lab","username":"outsider","role":"admin"}`)
	seed("tag_delete", 0, `{"id":"ricin","vocabulary_id":"toxins"}`)
	seed("package_collaborator_create", 1, `{"id":"priv","user_id":"outsider","capacity":"editor"}`)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, action uint16, role uint8, raw []byte) {
		data, perr := ckan.ParseData(ckan.Request{Method: "POST", ContentType: "application/json", Body: raw}, false)
		if perr != nil {
			return
		}
		name := names[int(action)%len(names)]
		who := matrixRoles[int(role)%len(matrixRoles)]
		c := m.caller(who)
		err := m.svc.checkAccess(ctx, name, c, data)
		if err != nil {
			var ce *ckan.Error
			if !errors.As(err, &ce) || ce.Status >= 500 {
				t.Fatalf("%s as %q on %s: %v", name, who, raw, err)
			}
			return
		}
		if c.Anonymous() && !authTable[name].anon {
			t.Fatalf("%s allowed an anonymous caller", name)
		}
		if (who == "" || who == "outsider") && !actions[name].GET {
			t.Fatalf("%s allowed %q to write: %s", name, who, raw)
		}
	})
}
