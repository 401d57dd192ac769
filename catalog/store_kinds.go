package catalog

import (
	"context"
	"fmt"

	"toxgate/catalog/ckan"
)

// The kinds of record the write path stores (store_write.go), with what
// each needs beyond the common protocol: a dataset frees a reused name
// and the files it dropped, datasets and organizations record activities
// and purge marks, vocabularies neither.

// kinds holds the record kinds of one Service, made once in New.
type kinds struct {
	datasets *recordKind[*Dataset]
	orgs     *recordKind[*Organization]
	vocabs   *recordKind[*Vocabulary]
}

func (s *Service) newKinds() kinds {
	return kinds{
		datasets: &recordKind[*Dataset]{
			code: kindDataset, coll: s.c.datasets,
			cached: s.st.cachedDataset, find: s.c.findDataset,
			put: s.st.commitDataset, remove: s.st.dropDataset,
			activity: func(ctx context.Context, base, next *Dataset) error {
				return s.recordActivity(ctx, s.datasetActivity(ctx, base, next))
			},
			purged: func(ctx context.Context, d *Dataset) error {
				return s.recordPurge(ctx, ActivityPackage, d.ID, d.MetadataCreated, d.Rev)
			},
			beforeWrite: func(ctx context.Context, base, next *Dataset) error {
				if base != nil && next.Name == base.Name {
					return nil
				}
				return s.freeName(ctx, next.Name, next.ID)
			},
			afterWrite: s.freeFiles,
			notFound:   func(string) error { return ckan.NotFound("Package was not found.") },
			taken: func(ctx context.Context, d *Dataset, created bool) error {
				if created {
					if existing, err := s.c.findDataset(ctx, d.ID); err == nil && existing != nil {
						return ckan.FieldError("id", "Dataset id already exists")
					}
				}
				return ckan.FieldError("name", "That URL is already in use.")
			},
			conflict: errConflict,
		},
		orgs: &recordKind[*Organization]{
			code: kindOrg, coll: s.c.orgs,
			cached: s.st.cachedGroup, find: s.c.findOrg,
			put: s.st.commitOrg, remove: s.st.dropOrg,
			activity: func(ctx context.Context, base, next *Organization) error {
				return s.recordActivity(ctx, orgActivity(base, next))
			},
			purged: func(ctx context.Context, o *Organization) error {
				return s.recordPurge(ctx, o.typeName(), o.ID, o.Created, o.Rev)
			},
			notFound: func(string) error { return ckan.NotFound("Organization was not found.") },
			taken: func(context.Context, *Organization, bool) error {
				return ckan.FieldError("name", "Group name already exists in database")
			},
			conflict: ckan.ValidationMessage("The organization was changed by another request at the same time; please retry"),
		},
		vocabs: &recordKind[*Vocabulary]{
			code: kindVocab, coll: s.c.vocabs,
			cached: s.st.cachedVocab, find: s.c.findVocab,
			put: s.st.commitVocab, remove: s.st.dropVocab,
			notFound: func(id string) error { return ckan.NotFound(fmt.Sprintf("Could not find vocabulary %q", id)) },
			taken: func(context.Context, *Vocabulary, bool) error {
				return ckan.FieldError("name", "That vocabulary name is already in use.")
			},
			conflict: ckan.ValidationMessage("The vocabulary was changed by another request at the same time; please retry"),
		},
	}
}

// mutateDataset is mutate for datasets.
func (s *Service) mutateDataset(ctx context.Context, id string, change func(base *Dataset) (*Dataset, error)) (*Dataset, error) {
	return mutate(ctx, s, s.kinds.datasets, id, change)
}

// insertDataset is insert for datasets.
func (s *Service) insertDataset(ctx context.Context, d *Dataset) error {
	return insert(ctx, s, s.kinds.datasets, d)
}

// purgeDataset is purge for datasets.
func (s *Service) purgeDataset(ctx context.Context, id string) error {
	return purge(ctx, s, s.kinds.datasets, id)
}

// mutateOrg is mutate for organizations and groups.
func (s *Service) mutateOrg(ctx context.Context, id string, change func(base *Organization) (*Organization, error)) (*Organization, error) {
	return mutate(ctx, s, s.kinds.orgs, id, change)
}

// insertOrg is insert for organizations and groups.
func (s *Service) insertOrg(ctx context.Context, o *Organization) error {
	return insert(ctx, s, s.kinds.orgs, o)
}

// purgeOrg is purge for organizations and groups.
func (s *Service) purgeOrg(ctx context.Context, id string) error {
	return purge(ctx, s, s.kinds.orgs, id)
}

// mutateVocab is mutate for vocabularies.
func (s *Service) mutateVocab(ctx context.Context, id string, change func(base *Vocabulary) (*Vocabulary, error)) (*Vocabulary, error) {
	return mutate(ctx, s, s.kinds.vocabs, id, change)
}

// insertVocab is insert for vocabularies.
func (s *Service) insertVocab(ctx context.Context, v *Vocabulary) error {
	return insert(ctx, s, s.kinds.vocabs, v)
}

// purgeVocab is purge for vocabularies (vocabulary_delete).
func (s *Service) purgeVocab(ctx context.Context, id string) error {
	return purge(ctx, s, s.kinds.vocabs, id)
}

// freeName renames a deleted dataset that holds name to its id, as CKAN does
// when the name is reused.
func (s *Service) freeName(ctx context.Context, name, forID string) error {
	holder := s.st.datasetNamed(name)
	if holder == nil || holder.ID == forID || holder.Name != name {
		return nil
	}
	if holder.State != StateDeleted {
		return ckan.FieldError("name", "That URL is already in use.")
	}
	_, err := s.mutateDataset(ctx, holder.ID, func(base *Dataset) (*Dataset, error) {
		if base.State != StateDeleted {
			return nil, ckan.FieldError("name", "That URL is already in use.")
		}
		n := base.clone()
		n.Name = base.ID
		return n, nil
	})
	return err
}
