package catalog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"toxgate/catalog/ckan"
)

// Tag vocabularies are CKAN's: named, sysadmin-managed lists of tags
// (toxin, culture medium, …). A dataset carries a vocabulary's tag as
// {"name", "vocabulary_id"} in its tags, only when the vocabulary holds
// that tag; package_search finds it in the field vocab_<vocabulary name>,
// as CKAN's Solr schema does. Free tags (no vocabulary_id) are unchanged.

func init() {
	register("vocabulary_list", true, "All tag vocabularies with their tags.", vocabularyList)
	register("vocabulary_show", true, "One tag vocabulary (id or name).", vocabularyShow)
	register("vocabulary_create", false, "Create a tag vocabulary (name, tags; sysadmins).", vocabularyCreate)
	register("vocabulary_update", false, "Rename a vocabulary or replace its tags (sysadmins).", vocabularyUpdate)
	register("vocabulary_delete", false, "Delete a vocabulary and its tags (sysadmins).", vocabularyDelete)
	register("tag_create", false, "Add a tag to a vocabulary (name, vocabulary_id; sysadmins).", tagCreate)
	register("tag_show", true, "One tag (id or name, vocabulary_id, include_datasets).", tagShow)
	register("tag_delete", false, "Delete a tag, from its vocabulary and its datasets (sysadmins).", tagDelete)
}

// Vocabulary is a stored tag vocabulary with its tags.
type Vocabulary struct {
	ID   string     `bson:"_id"`
	Name string     `bson:"name"`
	Tags []VocabTag `bson:"tags"`
	Rev  int64      `bson:"rev"`
}

// VocabTag is a tag of a vocabulary.
type VocabTag struct {
	ID   string `bson:"id"`
	Name string `bson:"name"`
}

// DatasetTag is a vocabulary tag on a dataset.
type DatasetTag struct {
	ID           string `bson:"id"`
	Name         string `bson:"name"`
	VocabularyID string `bson:"vocabulary_id"`
}

// Vocabulary name lengths (CKAN's VOCABULARY_NAME_MIN/MAX_LENGTH).
const (
	vocabNameMin = 2
	vocabNameMax = 100
)

func (v *Vocabulary) clone() *Vocabulary {
	c := *v
	c.Tags = append([]VocabTag(nil), v.Tags...)
	return &c
}

// tag finds a tag of v by id or name.
func (v *Vocabulary) tag(ref string) *VocabTag {
	for i := range v.Tags {
		if v.Tags[i].ID == ref || v.Tags[i].Name == ref {
			return &v.Tags[i]
		}
	}
	return nil
}

// addVocabTag validates tag name of vocabulary vocabRef on d, as CKAN's
// vocabulary_id_exists and tag_in_vocabulary_validator do, and adds it.
// Callers hold a lock.
func (st *readModel) addVocabTag(d *Dataset, name, vocabRef string) []string {
	msgs := tagErrors(name)
	v := st.vocab(vocabRef)
	if v == nil {
		return append(msgs, "Tag vocabulary was not found.")
	}
	t := v.tag(name)
	if t == nil || t.Name != name {
		return append(msgs, fmt.Sprintf("Tag %s does not belong to vocabulary %s", name, v.Name))
	}
	if len(msgs) == 0 && !slices.ContainsFunc(d.VocabTags, func(x DatasetTag) bool { return x.ID == t.ID }) {
		d.VocabTags = append(d.VocabTags, DatasetTag{ID: t.ID, Name: t.Name, VocabularyID: v.ID})
	}
	return msgs
}

// sortVocabTags orders a dataset's vocabulary tags by name, then vocabulary.
func sortVocabTags(tags []DatasetTag) {
	sort.Slice(tags, func(i, j int) bool {
		if tags[i].Name != tags[j].Name {
			return tags[i].Name < tags[j].Name
		}
		return tags[i].VocabularyID < tags[j].VocabularyID
	})
}

// tagDicts are the tags of a dataset dict: free and vocabulary tags, by
// name, as package_show lists them.
func tagDicts(d *Dataset) []tagDict {
	out := make([]tagDict, 0, len(d.Tags)+len(d.VocabTags))
	for _, t := range d.Tags {
		out = append(out, tagDict{DisplayName: t, ID: nameUUID(t), Name: t, State: StateActive})
	}
	for _, t := range d.VocabTags {
		vid := t.VocabularyID
		out = append(out, tagDict{DisplayName: t.Name, ID: t.ID, Name: t.Name, State: StateActive, VocabularyID: &vid})
	}
	if len(d.VocabTags) > 0 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	return out
}

// vocabTagInputs is d's vocabulary tags as a package_update data dict
// holds them.
func vocabTagInputs(d *Dataset) []any {
	out := make([]any, len(d.VocabTags))
	for i, t := range d.VocabTags {
		out[i] = map[string]any{"name": t.Name, "vocabulary_id": t.VocabularyID}
	}
	return out
}

// vocabTagDict is tag_dictize of a vocabulary tag (without its datasets).
func vocabTagDict(v *Vocabulary, t VocabTag) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "vocabulary_id": v.ID, "display_name": t.Name}
}

// vocabDict is vocabulary_dictize.
func vocabDict(v *Vocabulary) map[string]any {
	tags := make([]map[string]any, len(v.Tags))
	for i, t := range v.Tags {
		tags[i] = vocabTagDict(v, t)
	}
	return map[string]any{"id": v.ID, "name": v.Name, "tags": tags}
}

// Storage.

// dropTags takes the tags keep rejects off every dataset that has one,
// through the dataset write path (CKAN deletes a tag's dataset links with
// the tag). metadata_modified is left as it is, as in CKAN.
func (s *Service) dropTags(ctx context.Context, drop func(d *Dataset) bool, edit func(n *Dataset)) error {
	var ids []string
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if drop(d) {
				ids = append(ids, d.ID)
			}
		}
	})
	for _, id := range ids {
		if _, err := s.mutateDataset(ctx, id, func(base *Dataset) (*Dataset, error) {
			n := base.clone()
			edit(n)
			return n, nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// dropVocabTags takes the tags of vocabulary vocabID that gone accepts off
// every dataset.
func (s *Service) dropVocabTags(ctx context.Context, vocabID string, gone func(tagID string) bool) error {
	match := func(t DatasetTag) bool { return t.VocabularyID == vocabID && gone(t.ID) }
	return s.dropTags(ctx,
		func(d *Dataset) bool { return slices.ContainsFunc(d.VocabTags, match) },
		func(n *Dataset) { n.VocabTags = slices.DeleteFunc(n.VocabTags, match) })
}

// Actions. The writes are for sysadmins (authTable).

// vocabRef reads "id" (vocabulary id or name) and finds the vocabulary.
func (s *Service) vocabRef(r *Request) (*Vocabulary, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.Validation(map[string]any{"id": "id not in data"})
	}
	v := s.st.lookupVocab(ref)
	if v == nil {
		return nil, ckan.NotFound(fmt.Sprintf("Could not find vocabulary %q", ref))
	}
	return v, nil
}

// vocabFields validates a vocabulary's name and tags into v (name and tags
// only when given, unless create). Callers hold a lock.
func (st *readModel) vocabFields(v *Vocabulary, data map[string]any, create bool) *ckan.Error {
	errs := map[string]any{}
	if raw, ok := data["name"]; ok || create {
		name, _ := str(raw)
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			errs["name"] = []string{ckan.MsgMissing}
		case len(name) < vocabNameMin:
			errs["name"] = []string{fmt.Sprintf("Name must be at least %d characters long", vocabNameMin)}
		case len(name) > vocabNameMax:
			errs["name"] = []string{fmt.Sprintf("Name must be a maximum of %d characters long", vocabNameMax)}
		case name != v.Name && st.vocabByName[name] != "":
			errs["name"] = []string{"That vocabulary name is already in use."}
		}
		v.Name = name
	}
	if _, ok := data["tags"]; ok || create {
		dicts, derr := listOfDicts(data, "tags")
		if derr != nil {
			return derr
		}
		tagErrs := make([]any, len(dicts))
		bad := false
		keep := map[string]bool{}
		var tags []VocabTag
		for i, td := range dicts {
			name, _ := str(td["name"])
			msgs := tagErrors(name)
			if name == "" {
				msgs = []string{ckan.MsgMissing}
			}
			if len(msgs) > 0 {
				tagErrs[i] = map[string]any{"name": msgs}
				bad = true
				continue
			}
			tagErrs[i] = map[string]any{}
			if keep[name] {
				continue
			}
			keep[name] = true
			if old := v.tag(name); old != nil && old.Name == name {
				tags = append(tags, *old)
			} else {
				tags = append(tags, VocabTag{ID: newID(), Name: name})
			}
		}
		if bad {
			errs["tags"] = tagErrs
		}
		v.Tags = tags
	}
	if v.Tags == nil {
		v.Tags = []VocabTag{}
	}
	if len(errs) > 0 {
		return ckan.Validation(errs)
	}
	return nil
}

func vocabularyList(_ context.Context, s *Service, _ *Request) (any, error) {
	out := viewed(s.st, func() []map[string]any {
		out := make([]map[string]any, 0, len(s.st.vocabs))
		for _, v := range s.st.vocabs {
			out = append(out, vocabDict(v))
		}
		return out
	})
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
	return out, nil
}

func vocabularyShow(_ context.Context, s *Service, r *Request) (any, error) {
	v, err := s.vocabRef(r)
	if err != nil {
		return nil, err
	}
	return vocabDict(v), nil
}

func vocabularyCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	if id, _ := str(r.Data["id"]); id != "" {
		return nil, ckan.FieldError("id", "The input field id was not expected.")
	}
	v := &Vocabulary{ID: newID()}
	verr := viewed(s.st, func() *ckan.Error { return s.st.vocabFields(v, r.Data, true) })
	if verr != nil {
		return nil, verr
	}
	if err := s.insertVocab(ctx, v); err != nil {
		return nil, err
	}
	return vocabDict(v), nil
}

func vocabularyUpdate(ctx context.Context, s *Service, r *Request) (any, error) {
	v, err := s.vocabRef(r)
	if err != nil {
		return nil, err
	}
	update := func(base *Vocabulary) (*Vocabulary, map[string]bool, error) {
		n := base.clone()
		verr := viewed(s.st, func() *ckan.Error { return s.st.vocabFields(n, r.Data, false) })
		if verr != nil {
			return nil, nil, verr
		}
		dropped := map[string]bool{}
		for _, t := range base.Tags {
			if n.tag(t.ID) == nil {
				dropped[t.ID] = true
			}
		}
		return n, dropped, nil
	}
	// tags taken out of the vocabulary leave the datasets first, so that
	// an update cut short leaves no dataset with a tag the vocabulary lost
	_, dropped, err := update(v)
	if err != nil {
		return nil, err
	}
	if err := s.dropVocabTags(ctx, v.ID, func(id string) bool { return dropped[id] }); err != nil {
		return nil, err
	}
	next, err := s.mutateVocab(ctx, v.ID, func(base *Vocabulary) (*Vocabulary, error) {
		n, _, err := update(base)
		return n, err
	})
	if err != nil {
		return nil, err
	}
	return vocabDict(next), nil
}

func vocabularyDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	v, err := s.vocabRef(r)
	if err != nil {
		return nil, err
	}
	// the datasets first: a delete cut short leaves the vocabulary, to be
	// deleted again
	if err := s.dropVocabTags(ctx, v.ID, func(string) bool { return true }); err != nil {
		return nil, err
	}
	return nil, s.purgeVocab(ctx, v.ID)
}

func tagCreate(ctx context.Context, s *Service, r *Request) (any, error) {
	errs := map[string]any{}
	name, _ := str(r.Data["name"])
	if _, given := r.Data["name"]; !given || name == "" {
		errs["name"] = []string{ckan.MsgMissing}
	} else if msgs := tagErrors(name); len(msgs) > 0 {
		errs["name"] = msgs
	}
	if id, _ := str(r.Data["id"]); id != "" {
		errs["id"] = []string{"The input field id was not expected."}
	}
	vref, _ := str(r.Data["vocabulary_id"])
	v := s.st.lookupVocab(vref)
	switch {
	case vref == "":
		errs["vocabulary_id"] = []string{ckan.MsgMissing}
	case v == nil:
		errs["vocabulary_id"] = []string{"Tag vocabulary was not found."}
	case errs["name"] == nil:
		if t := v.tag(name); t != nil && t.Name == name {
			errs["vocabulary_id"] = []string{fmt.Sprintf("Tag %s already belongs to vocabulary %s", name, vref)}
		}
	}
	if len(errs) > 0 {
		return nil, ckan.Validation(errs)
	}
	tag := VocabTag{ID: newID(), Name: name}
	next, err := s.mutateVocab(ctx, v.ID, func(base *Vocabulary) (*Vocabulary, error) {
		if t := base.tag(name); t != nil && t.Name == name {
			return nil, ckan.FieldError("vocabulary_id", fmt.Sprintf("Tag %s already belongs to vocabulary %s", name, vref))
		}
		n := base.clone()
		n.Tags = append(n.Tags, tag)
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	m := vocabTagDict(next, tag)
	m["packages"] = []any{}
	return m, nil
}

// foundTag is a tag tag_show and tag_delete found: a vocabulary tag (v
// set) or a free tag.
type foundTag struct {
	v    *Vocabulary
	id   string
	name string
}

// findTag finds a tag by id or name as CKAN's Tag.get does: by id first,
// then by name among the free tags, or among vocabulary vocabRef's tags
// when given. Free tags exist while a dataset has them; only the datasets
// seen admits count (nil: every dataset). Callers hold a lock.
func (st *readModel) findTag(ref, vocabRef string, seen func(*Dataset) bool) (foundTag, bool) {
	for _, v := range st.vocabs {
		for _, t := range v.Tags {
			if t.ID == ref {
				return foundTag{v: v, id: t.ID, name: t.Name}, true
			}
		}
	}
	if vocabRef != "" {
		v := st.vocab(vocabRef)
		if v == nil {
			return foundTag{}, false
		}
		if t := v.tag(ref); t != nil && t.Name == ref {
			return foundTag{v: v, id: t.ID, name: t.Name}, true
		}
		return foundTag{}, false
	}
	for _, d := range st.datasets {
		if seen != nil && !seen(d) {
			continue
		}
		for _, t := range d.Tags {
			if t == ref || nameUUID(t) == ref {
				return foundTag{id: nameUUID(t), name: t}, true
			}
		}
	}
	return foundTag{}, false
}

// has reports whether dataset d carries tag t.
func (t foundTag) on(d *Dataset) bool {
	if t.v == nil {
		return slices.Contains(d.Tags, t.name)
	}
	return slices.ContainsFunc(d.VocabTags, func(x DatasetTag) bool { return x.ID == t.id })
}

func tagShow(_ context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	vocabRef, _ := str(r.Data["vocabulary_id"])
	withDatasets, _ := ckan.AsBool(r.Data["include_datasets"])
	return viewed2(s.st, func() (any, error) {
		// a free tag exists for the caller while a dataset they may read has it
		t, ok := s.st.findTag(ref, vocabRef, func(d *Dataset) bool { return d.State == StateActive && s.st.canRead(r.Caller, d) })
		if !ok {
			return nil, ckan.NotFound("")
		}
		var m map[string]any
		if t.v != nil {
			m = vocabTagDict(t.v, VocabTag{ID: t.id, Name: t.name})
		} else {
			m = map[string]any{"id": t.id, "name": t.name, "vocabulary_id": nil, "display_name": t.name}
		}
		if withDatasets {
			// CKAN: the public datasets with the tag, at most 1000
			var ds []*Dataset
			for _, d := range s.st.datasets {
				if d.State == StateActive && !d.Private && t.on(d) {
					ds = append(ds, d)
				}
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
			pkgs := make([]*DatasetDict, 0, len(ds))
			for i, d := range ds {
				if i == 1000 {
					break
				}
				pkgs = append(pkgs, s.st.datasetDict(d, r.SiteURL))
			}
			m["packages"] = pkgs
		}
		return m, nil
	})
}

func tagDelete(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.Validation(map[string]any{"id": "id not in data"})
	}
	vocabRef, _ := str(r.Data["vocabulary_id"])
	t, ok := viewed2(s.st, func() (foundTag, bool) { return s.st.findTag(ref, vocabRef, nil) })
	if !ok {
		return nil, ckan.NotFound(fmt.Sprintf("Could not find tag %q", ref))
	}
	if t.v == nil {
		return nil, s.dropTags(ctx, t.on, func(n *Dataset) {
			n.Tags = slices.DeleteFunc(n.Tags, func(x string) bool { return x == t.name })
		})
	}
	if err := s.dropVocabTags(ctx, t.v.ID, func(id string) bool { return id == t.id }); err != nil {
		return nil, err
	}
	_, err := s.mutateVocab(ctx, t.v.ID, func(base *Vocabulary) (*Vocabulary, error) {
		n := base.clone()
		n.Tags = slices.DeleteFunc(n.Tags, func(x VocabTag) bool { return x.ID == t.id })
		return n, nil
	})
	return nil, err
}

// vocabTagList is tag_list with vocabulary_id: the vocabulary's tags (all
// of them, as CKAN's Tag.all), those containing q when given.
func vocabTagList(s *Service, vocabRef, q string, allFields bool) (any, error) {
	v := s.st.lookupVocab(vocabRef)
	if v == nil {
		return nil, ckan.NotFound(fmt.Sprintf("could not find vocabulary '%s'", vocabRef))
	}
	var tags []VocabTag
	for _, t := range v.Tags {
		if q == "" || strings.Contains(strings.ToLower(t.Name), q) {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Name < tags[j].Name })
	if !allFields {
		names := make([]string, len(tags))
		for i, t := range tags {
			names[i] = t.Name
		}
		return names, nil
	}
	out := make([]map[string]any, len(tags))
	for i, t := range tags {
		out[i] = vocabTagDict(v, t)
	}
	return out, nil
}
