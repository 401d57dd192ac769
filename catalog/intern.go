package catalog

import "unique"

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

// internPtr interns the string p points to, in place.
func internPtr(p *string) {
	if p != nil {
		*p = intern(*p)
	}
}

// internDataset makes d's repeated values share their canonical copies.
// Only values that repeat across datasets by nature are interned: a
// value held once (a name, a URL, a description) would cost the table's
// entry and save nothing. Callers own d (no reader sees it yet, or they
// hold the write lock).
func internDataset(d *Dataset) {
	d.State, d.Type = intern(d.State), intern(d.Type)
	d.CreatorUserID, d.OwnerOrg = intern(d.CreatorUserID), intern(d.OwnerOrg)
	internPtr(d.LicenseID)
	for i, t := range d.Tags {
		d.Tags[i] = intern(t)
	}
	for i, g := range d.Groups {
		d.Groups[i] = intern(g)
	}
	for i := range d.Extras {
		d.Extras[i].Key = intern(d.Extras[i].Key)
	}
	for i := range d.VocabTags {
		t := &d.VocabTags[i]
		t.ID, t.Name, t.VocabularyID = intern(t.ID), intern(t.Name), intern(t.VocabularyID)
	}
	for i := range d.Collaborators {
		c := &d.Collaborators[i]
		c.UserID, c.Capacity = intern(c.UserID), intern(c.Capacity)
	}
	for i := range d.Resources {
		r := &d.Resources[i]
		r.Format, r.State = intern(r.Format), intern(r.State)
		internPtr(r.Mimetype)
		internPtr(r.MimetypeInner)
		internPtr(r.ResourceType)
		internPtr(r.URLType)
	}
}
