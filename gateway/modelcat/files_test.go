package modelcat

import (
	"strings"
	"testing"
)

// The files of each model come from internal/data/SOURCES.md ("used by") and
// the module's own folder, with their sources and licences.
func TestFilesOfTheRepositoryModules(t *testing.T) {
	byRel := func(name string) map[string]dataFile {
		out := map[string]dataFile{}
		for _, f := range filesOf("../../modules", name) {
			out[f.Rel] = f
		}
		return out
	}
	herg := byRel("herg")
	if f, ok := herg["internal/data/herg_karim.csv"]; !ok || !strings.Contains(f.Licence, "CC-BY-4.0") || !strings.Contains(f.Source, "soolllv/tox") || len(herg) != 2 {
		t.Fatalf("herg files: %+v", herg)
	}
	if _, ok := herg["herg/model/CV.md"]; !ok {
		t.Fatalf("herg files lack CV.md: %+v", herg)
	}
	multi := byRel("multitask")
	for _, want := range []string{"internal/data/herg_karim.csv", "internal/data/tox21.csv", "internal/data/alternative_aop_KE2_mito_dysfunction.csv"} {
		if _, ok := multi[want]; !ok {
			t.Errorf("multitask lacks %s: %v", want, multi)
		}
	}
	tk := byRel("tk-2d")
	if f, ok := tk["tk-2d/viability/matthews2023_drc48h.csv"]; !ok || !strings.Contains(f.Description, "modules/tk-2d/SOURCES.md") {
		t.Fatalf("tk-2d files: %+v", tk)
	}
	if _, ok := tk["tk-2d/SOURCES.md"]; !ok {
		t.Fatalf("tk-2d lacks SOURCES.md: %+v", tk)
	}
	if got := filesOf("../../modules", "example-units"); len(got) != 0 {
		t.Fatalf("example-units files: %+v", got)
	}
}

func TestStableIDIsAUUID(t *testing.T) {
	a, b := stableID("herg/internal/data/herg_karim.csv"), stableID("herg/page")
	if a == b || len(a) != 36 || a[14] != '5' || a != stableID("herg/internal/data/herg_karim.csv") {
		t.Fatalf("ids %s %s", a, b)
	}
	if DatasetName("Foo.Bar_1") != "model-foo-bar_1" {
		t.Fatal(DatasetName("Foo.Bar_1"))
	}
}
