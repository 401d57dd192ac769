package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/ckan"
)

// maxAttempts bounds the optimistic-concurrency retries of one write.
const maxAttempts = 8

// errConflict is returned when a dataset kept changing under a write.
var errConflict = ckan.ValidationMessage("The dataset was changed by another request at the same time; please retry")

// mutateDataset applies mutate to the freshest stored copy of dataset id and
// writes the result as the next revision, only if no other writer took that
// revision first (each revision is claimed once, see recordStore.replace).
// When another writer came first it reads again and re-applies mutate, so
// no update is lost.
func (s *Service) mutateDataset(ctx context.Context, id string, mutate func(base *Dataset) (*Dataset, error)) (*Dataset, error) {
	defer s.lockFor(id)()
	// The in-memory copy is current (requests sync first and this process's
	// writes to id are serialized); after a lost race, read the store.
	s.st.mu.RLock()
	base := s.st.datasets[id]
	s.st.mu.RUnlock()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 || base == nil {
			var err error
			if base, err = s.c.findDataset(ctx, id); err != nil {
				return nil, err
			}
		}
		if base == nil {
			return nil, ckan.NotFound("Package was not found.")
		}
		next, err := mutate(base)
		if err != nil {
			return nil, err
		}
		next.ID, next.Rev = base.ID, base.Rev+1
		if next.Name != base.Name {
			if err := s.freeName(ctx, next.Name, next.ID); err != nil {
				return nil, err
			}
		}
		ok, err := s.c.replaceThen(ctx, s.c.datasets, kindDataset, next.ID, next.Rev, next, func() error {
			return s.recordActivity(ctx, s.datasetActivity(ctx, base, next))
		})
		if mongo.IsDuplicateKeyError(err) {
			return nil, ckan.FieldError("name", "That URL is already in use.")
		}
		if err != nil {
			return nil, err
		}
		if ok {
			err := s.committedDataset(ctx, next)
			s.freeFiles(ctx, base, next)
			return next, err
		}
		s.log.Debug("dataset changed concurrently, retrying", "id", id, "attempt", attempt+1)
	}
	return nil, errConflict
}

// insertDataset stores a new dataset.
func (s *Service) insertDataset(ctx context.Context, d *Dataset) error {
	if err := s.freeName(ctx, d.Name, d.ID); err != nil {
		return err
	}
	d.Rev = 1
	if err := s.recordActivity(ctx, s.datasetActivity(ctx, nil, d)); err != nil {
		return err
	}
	_, err := s.c.datasets.InsertOne(ctx, d)
	if mongo.IsDuplicateKeyError(err) {
		if existing, ferr := s.c.findDataset(ctx, d.ID); ferr == nil && existing != nil {
			return ckan.FieldError("id", "Dataset id already exists")
		}
		return ckan.FieldError("name", "That URL is already in use.")
	}
	if err != nil {
		return fmt.Errorf("insert dataset: %w", err)
	}
	if err := s.c.note(ctx, kindDataset, d.ID); err != nil {
		return err
	}
	return s.committedDataset(ctx, d)
}

// freeName renames a deleted dataset that holds name to its id, as CKAN does
// when the name is reused.
func (s *Service) freeName(ctx context.Context, name, forID string) error {
	s.st.mu.RLock()
	holder := s.st.datasets[s.st.byName[name]]
	s.st.mu.RUnlock()
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

// committedDataset records a dataset write in the change marker and in the
// in-memory catalog.
func (s *Service) committedDataset(ctx context.Context, d *Dataset) error {
	s.st.mu.Lock()
	s.st.putDataset(d)
	s.st.mu.Unlock()
	return s.record(ctx, kindDataset, d.ID)
}

// purgeDataset deletes a dataset for good.
func (s *Service) purgeDataset(ctx context.Context, id string) error {
	s.st.mu.RLock()
	before := s.st.datasets[id]
	s.st.mu.RUnlock()
	if before != nil {
		if err := s.recordPurge(ctx, ActivityPackage, id, before.MetadataCreated, before.Rev); err != nil {
			return err
		}
	}
	if _, err := s.c.datasets.DeleteOne(ctx, bson.M{"_id": id}); err != nil {
		return fmt.Errorf("purge dataset %s: %w", id, err)
	}
	if err := s.c.note(ctx, kindDataset, id); err != nil {
		return err
	}
	defer s.freeFiles(ctx, before, nil)
	s.st.mu.Lock()
	s.st.removeDataset(id)
	s.st.mu.Unlock()
	return s.record(ctx, kindDataset, id)
}

// mutateOrg is mutateDataset for organizations.
func (s *Service) mutateOrg(ctx context.Context, id string, mutate func(base *Organization) (*Organization, error)) (*Organization, error) {
	defer s.lockFor(id)()
	s.st.mu.RLock()
	base := s.st.anyGroup(id)
	s.st.mu.RUnlock()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 || base == nil {
			var err error
			if base, err = s.c.findOrg(ctx, id); err != nil {
				return nil, err
			}
		}
		if base == nil {
			return nil, ckan.NotFound("Organization was not found.")
		}
		next, err := mutate(base)
		if err != nil {
			return nil, err
		}
		next.ID, next.Rev = base.ID, base.Rev+1
		ok, err := s.c.replaceThen(ctx, s.c.orgs, kindOrg, next.ID, next.Rev, next, func() error {
			return s.recordActivity(ctx, orgActivity(base, next))
		})
		if mongo.IsDuplicateKeyError(err) {
			return nil, ckan.FieldError("name", "Group name already exists in database")
		}
		if err != nil {
			return nil, err
		}
		if ok {
			return next, s.committedOrg(ctx, next)
		}
	}
	return nil, ckan.ValidationMessage("The organization was changed by another request at the same time; please retry")
}

// insertOrg stores a new organization or group.
func (s *Service) insertOrg(ctx context.Context, o *Organization) error {
	if err := s.recordActivity(ctx, orgActivity(nil, o)); err != nil {
		return err
	}
	if _, err := s.c.orgs.InsertOne(ctx, o); err != nil {
		if isDup(err) {
			return ckan.FieldError("name", "Group name already exists in database")
		}
		return fmt.Errorf("insert %s: %w", o.typeName(), err)
	}
	if err := s.c.note(ctx, kindOrg, o.ID); err != nil {
		return err
	}
	return s.committedOrg(ctx, o)
}

func (s *Service) committedOrg(ctx context.Context, o *Organization) error {
	s.st.mu.Lock()
	s.st.putOrg(o)
	s.st.mu.Unlock()
	return s.record(ctx, kindOrg, o.ID)
}

func isDup(err error) bool { return mongo.IsDuplicateKeyError(err) }

// record raises the change marker for a change already written to the
// store and applied to the in-memory catalog. When no other process wrote
// in between, this process's catalog is known to be current up to the new
// sequence number and needs no reload.
func (s *Service) record(ctx context.Context, kind, id string) error {
	s.markMu.Lock()
	defer s.markMu.Unlock()
	give := time.Now().Add(10 * time.Second)
	for attempt := 0; attempt < 50 || time.Now().Before(give); attempt++ {
		// the marker this process wrote last is still the stored one
		// unless another process wrote since: then the CAS fails and the
		// next attempt reads it
		m := s.lastMarker
		if attempt > 0 || m == nil {
			read, err := s.c.readMarker(ctx)
			if err != nil {
				return err
			}
			m = &read
		}
		recent := make([]changeEntry, 0, len(m.Recent)+1)
		recent = append(append(recent, m.Recent...), changeEntry{Seq: m.Seq + 1, Kind: kind, ID: id})
		if len(recent) > markerKeep {
			recent = recent[len(recent)-markerKeep:]
		}
		next := marker{Seq: m.Seq + 1, Recent: recent}
		ok, err := s.c.casMarker(ctx, *m, next)
		if err != nil {
			s.lastMarker = nil
			return err
		}
		s.lastMarker = nil
		if ok {
			s.lastMarker = &next
			s.st.mu.Lock()
			if s.st.applied == m.Seq {
				s.st.applied = next.Seq
			}
			s.st.mu.Unlock()
			s.pruneClaims()
			// readers check this small document first; it is raised
			// before the write returns, so the next request sees it
			return s.c.raiseSeq(ctx, next.Seq)
		}
	}
	return fmt.Errorf("record change of %s: the change marker kept moving", id)
}

// lockFor serializes this process's writes to one record (the embedded
// store does not apply a filtered update atomically, so the revision check
// alone protects only against other processes on a real MongoDB). The
// returned function releases it.
func (s *Service) lockFor(id string) func() {
	s.lockMu.Lock()
	l := s.locks[id]
	if l == nil {
		l = &keyLock{}
		s.locks[id] = l
	}
	l.refs++
	s.lockMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.lockMu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.locks, id)
		}
		s.lockMu.Unlock()
	}
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}
