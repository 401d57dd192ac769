package catalog

import (
	"unique"
	"unsafe"
)

// intern is the canonical copy of s: records read from the store or a
// request hold their own copy of each string, and the values a catalog
// repeats across its datasets (states, types, formats, licences, tags,
// organization and user ids, extras keys) are then held once per process.
// The canonical copies are weak: one no record uses any more is
// collected.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// internAt makes *p the canonical copy of its value, writing *p only when
// it is not already: a record may share its slices' backing arrays with
// the copy it was made from, which readers hold (they are interned
// already, so they are never written).
func internAt(p *string) {
	if c := intern(*p); unsafe.StringData(c) != unsafe.StringData(*p) {
		*p = c
	}
}

// internPtr makes *pp point to the canonical copy of its value. The
// string it points to is not written (the pointer may be shared with the
// record it was copied from); a new pointer is set instead, unless the
// value is canonical already.
func internPtr(pp **string) {
	if *pp == nil {
		return
	}
	if c := intern(**pp); unsafe.StringData(c) != unsafe.StringData(**pp) {
		*pp = &c
	}
}

// internDataset makes d's repeated values share their canonical copies.
// Only values that repeat across datasets by nature are interned: a
// value held once (a name, a URL, a description) would cost the table's
// entry and save nothing. Callers own d's own fields (no reader sees d
// yet) and hold the write lock.
func internDataset(d *Dataset) {
	internAt(&d.State)
	internAt(&d.Type)
	internAt(&d.CreatorUserID)
	internAt(&d.OwnerOrg)
	internPtr(&d.LicenseID)
	for i := range d.Tags {
		internAt(&d.Tags[i])
	}
	for i := range d.Groups {
		internAt(&d.Groups[i])
	}
	for i := range d.Extras {
		internAt(&d.Extras[i].Key)
	}
	for i := range d.VocabTags {
		t := &d.VocabTags[i]
		internAt(&t.ID)
		internAt(&t.Name)
		internAt(&t.VocabularyID)
	}
	for i := range d.Collaborators {
		internAt(&d.Collaborators[i].UserID)
		internAt(&d.Collaborators[i].Capacity)
	}
	for i := range d.Resources {
		r := &d.Resources[i]
		internAt(&r.Format)
		internAt(&r.State)
		internPtr(&r.Mimetype)
		internPtr(&r.MimetypeInner)
		internPtr(&r.ResourceType)
		internPtr(&r.URLType)
	}
}
