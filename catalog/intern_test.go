package catalog

import (
	"strings"
	"testing"
	"unsafe"
)

// Records entering the read model share one copy of each repeated value
// (here from two separately decoded copies), and keep their values.
func TestRecordsShareRepeatedValues(t *testing.T) {
	rm := newReadModel()
	own := func(s string) string { return strings.Clone(s) }
	mk := func(id, name string) *Dataset {
		lic, mt := own("cc-by"), own("text/csv")
		return &Dataset{ID: id, Name: name, State: own(StateActive), Type: own("dataset"), OwnerOrg: own("org-1"),
			CreatorUserID: own("user-1"), LicenseID: &lic, Tags: []string{own("toxicology"), own("rare-" + name)},
			Extras:    []Extra{{Key: own("species"), Value: own("rat")}},
			Resources: []Resource{{ID: id + "-r", Format: own("CSV"), State: own(StateActive), Mimetype: &mt}}, Rev: 1}
	}
	a, b := mk("id-a", "a"), mk("id-b", "b")
	rm.putDataset(a)
	rm.putDataset(b)
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are not one copy", what, x, y)
		}
	}
	same("state", a.State, b.State)
	same("type", a.Type, b.Type)
	same("owner_org", a.OwnerOrg, b.OwnerOrg)
	same("creator", a.CreatorUserID, b.CreatorUserID)
	same("licence", *a.LicenseID, *b.LicenseID)
	same("tag", a.Tags[0], b.Tags[0])
	same("extras key", a.Extras[0].Key, b.Extras[0].Key)
	same("format", a.Resources[0].Format, b.Resources[0].Format)
	same("mimetype", *a.Resources[0].Mimetype, *b.Resources[0].Mimetype)
	if a.Tags[1] != "rare-a" || b.Tags[1] != "rare-b" || *a.LicenseID != "cc-by" || a.Extras[0].Value != "rat" {
		t.Fatalf("values changed: %v %v %q", a.Tags, b.Tags, *a.LicenseID)
	}
	// a write's copy of a held record shares its interned values and is
	// put without writing through them
	c := b.clone()
	c.Rev = 2
	c.Title = "changed"
	rm.putDataset(c)
	same("copy's tag", b.Tags[0], c.Tags[0])
	if c.LicenseID != b.LicenseID {
		t.Errorf("the copy's licence pointer was replaced though its value is canonical")
	}
}
