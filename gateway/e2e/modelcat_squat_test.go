package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// A model's place in the catalog cannot be taken from the publisher:
//
//   - an ordinary user can neither create nor rename a dataset to model-*
//     (409 naming the field name);
//   - a models organization that a user made first (with
//     catalog.auth.user_create_organizations on, any user may create one)
//     is not published into while a non-sysadmin is its admin or editor;
//   - a model-herg dataset outside the models organization (made by a
//     sysadmin, as any dataset made before the name was reserved) is not
//     adopted: its SHA-256 is not trusted, it is not changed, the clash is
//     logged naming it and its organization and counted in
//     toxgate_modelcat_clashes, and the other models are published;
//   - once the squatters are gone the publisher's retries publish everything.
func TestModelsPlaceCannotBeSquatted(t *testing.T) {
	modules := []string{"herg", "example-units"}
	seed, _ := modelsGateway(t, modules, harness.WithEnv("TOXGATE_CATALOG_PUBLISH_MODELS=false", "TOXGATE_CATALOG_AUTH_USER_CREATE_ORGANIZATIONS=true"))
	admin := adminToken(t, seed)
	provision(t, seed, admin, "mallory", "password-mallory-1", true)
	mallory := tokenFor(t, seed, admin, "mallory", nil)
	for _, org := range []string{"mallory-lab", "toxgate-models"} {
		if code, out := ckan(t, seed, "organization_create", mallory, map[string]any{"name": org}); code != 200 {
			t.Fatalf("organization_create %s as mallory: %d %v", org, code, out)
		}
	}
	// reservedName reports a CKAN ValidationError naming the field name.
	reservedName := func(code int, out map[string]any) bool {
		e, _ := out["error"].(map[string]any)
		msgs, _ := e["name"].([]any)
		return code == 409 && e["__type"] == "Validation Error" && len(msgs) == 1 &&
			strings.HasPrefix(msgs[0].(string), `Names starting with "model-" are reserved`)
	}
	if code, out := ckan(t, seed, "package_create", mallory, map[string]any{"name": "model-herg", "owner_org": "mallory-lab"}); !reservedName(code, out) {
		t.Fatalf("package_create model-herg as mallory: %d %v", code, out)
	}
	if code, out := ckan(t, seed, "package_create", mallory, map[string]any{"name": "assay", "owner_org": "mallory-lab"}); code != 200 {
		t.Fatalf("package_create assay: %d %v", code, out)
	}
	if code, out := ckan(t, seed, "package_patch", mallory, map[string]any{"id": "assay", "name": "model-example-units"}); !reservedName(code, out) {
		t.Fatalf("renaming to model-example-units as mallory: %d %v", code, out)
	}
	sha := modelSHA(t, seed, admin, "herg")
	squat := map[string]any{"name": "model-herg", "owner_org": "mallory-lab", "title": "Model: hERG (not ours)", "notes": "squatted",
		"extras": []any{map[string]any{"key": "module_sha256", "value": sha}}}
	if code, out := ckan(t, seed, "package_create", admin, squat); code != 200 {
		t.Fatalf("package_create model-herg in mallory-lab as sysadmin: %d %v", code, out)
	}

	pub, _ := modelsGateway(t, modules, harness.WithEnv("TOXGATE_MONGODB_URI="+seed.StoreURI(), "TOXGATE_FILES_DIR="+filepath.Join(seed.DataDir, "files"), "TOXGATE_CATALOG_AUTH_USER_CREATE_ORGANIZATIONS=true"))
	orgClash := regexp.MustCompile(`the models organization has admins or editors who are not sysadmins[^\n]*"org":"toxgate-models"[^\n]*"users":"mallory"`)
	if !pub.WaitLog(orgClash, 2*time.Minute) {
		t.Fatalf("no clash logged for the organization mallory made; logs:\n%s", pub.Logs())
	}
	if v := metricValue(t, pub, `toxgate_modelcat_clashes{kind="org"}`); v != 1 {
		t.Fatalf("toxgate_modelcat_clashes{kind=\"org\"} = %v", v)
	}
	if code, out := ckan(t, pub, "package_show", admin, map[string]any{"id": "model-example-units"}); code != 404 {
		t.Fatalf("published into mallory's organization: %d %v", code, out)
	}

	// Mallory leaves toxgate-models: the publisher's next pass takes it,
	// publishes example-units and refuses model-herg of mallory-lab.
	if code, out := ckan(t, seed, "organization_member_delete", admin, map[string]any{"id": "toxgate-models", "username": "mallory"}); code != 200 {
		t.Fatalf("organization_member_delete: %d %v", code, out)
	}
	dsClash := regexp.MustCompile(`a dataset outside the models organization holds the model's dataset name[^\n]*"model":"herg","dataset":"model-herg"[^\n]*"dataset_org":"mallory-lab","models_org":"toxgate-models"`)
	if !pub.WaitLog(dsClash, 2*time.Minute) {
		t.Fatalf("no clash logged for model-herg of mallory-lab; logs:\n%s", pub.Logs())
	}
	units := waitDataset(t, pub, "model-example-units", modelSHA(t, pub, admin, "example-units"))
	if org := units["organization"].(map[string]any)["name"]; org != "toxgate-models" {
		t.Fatalf("model-example-units published in %v", org)
	}
	waitFor(t, time.Minute, "the dataset clash counted", func() bool {
		return metricValue(t, pub, `toxgate_modelcat_clashes{kind="dataset"}`) == 1 && metricValue(t, pub, `toxgate_modelcat_clashes{kind="org"}`) == 0
	})
	_, out := ckan(t, pub, "package_show", admin, map[string]any{"id": "model-herg"})
	ds := out["result"].(map[string]any)
	if ds["organization"].(map[string]any)["name"] != "mallory-lab" || ds["notes"] != "squatted" || ds["title"] != "Model: hERG (not ours)" ||
		len(ds["resources"].([]any)) != 0 || len(ds["extras"].([]any)) != 1 {
		t.Fatalf("the squatting dataset was changed: %v", ds)
	}

	// The squatter purged, the publisher's retry publishes herg in its organization.
	if code, out := ckan(t, seed, "dataset_purge", admin, map[string]any{"id": "model-herg"}); code != 200 {
		t.Fatalf("dataset_purge: %d %v", code, out)
	}
	herg := waitDataset(t, pub, "model-herg", sha)
	if herg["organization"].(map[string]any)["name"] != "toxgate-models" || len(herg["resources"].([]any)) == 0 {
		t.Fatalf("model-herg after the squatter left: %v", herg)
	}
	waitFor(t, time.Minute, "no clash counted", func() bool {
		return metricValue(t, pub, `toxgate_modelcat_clashes{kind="dataset"}`) == 0
	})
}
