package catalog

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"toxgate/catalog/search"
)

// state is the in-memory copy of the catalog with its search index.
type readModel struct {
	mu        sync.RWMutex
	datasets  map[string]*Dataset
	byName    map[string]string
	resources map[string]string
	orgs      map[string]*Organization
	orgByName map[string]string
	index     *search.Index
	// deferIndex makes putDataset leave the index alone, while a load
	// fills a fresh read model (see Service.indexLoaded).
	deferIndex bool
	applied    int64
	// appliedAt is when the marker read that made applied current started
	// (catchUp reads the claims made since, less claimMargin).
	appliedAt time.Time
	// publicNames caches package_list's sorted names; nil after any change.
	publicNames atomic.Pointer[[]string]
	// rendered holds the encoded dicts of the datasets read most
	// recently (by id), filled by readers under the read lock (see
	// datasetJSON), at most Options.ReplyCacheEntries.
	rendered *replyCache
	// groups and vocabs hold the groups and tag vocabularies (groups.go,
	// vocab.go), by id and by name.
	groups                   map[string]*Organization
	vocabs                   map[string]*Vocabulary
	groupByName, vocabByName map[string]string
	// allowCollaborators and allowAdminCollaborators are
	// Options.AllowCollaborators and Options.AllowAdminCollaborators.
	allowCollaborators, allowAdminCollaborators bool
	// auth holds Options.Auth, the ckan.auth.* switches (authz.go).
	auth AuthOptions
	// journal collects every dataset change for the records file this
	// process writes (readmodel_records.go); nil when none.
	journal *recordJournal
}

func newReadModel() *readModel {
	return &readModel{
		rendered:  newReplyCache(0),
		datasets:  map[string]*Dataset{},
		byName:    map[string]string{},
		resources: map[string]string{},
		orgs:      map[string]*Organization{},
		orgByName: map[string]string{},
		index:     search.New(),
		groups:    map[string]*Organization{}, groupByName: map[string]string{},
		vocabs: map[string]*Vocabulary{}, vocabByName: map[string]string{},
	}
}

// putDataset stores d unless the cached copy is as new or newer. Callers hold
// the write lock.
func (st *readModel) putDataset(d *Dataset) {
	internDataset(d)
	st.putInterned(d)
}

// putInterned is putDataset for a dataset whose values are interned
// already (internDataset; a records file's readers intern on the cores
// that decode). Callers hold the write lock.
func (st *readModel) putInterned(d *Dataset) {
	st.publicNames.Store(nil)
	if old := st.datasets[d.ID]; old != nil {
		if old.Rev >= d.Rev {
			return
		}
		st.unlinkDataset(old)
		st.rendered.Delete(d.ID)
	}
	st.datasets[d.ID] = d
	st.byName[d.Name] = d.ID
	for _, r := range d.Resources {
		st.resources[r.ID] = d.ID
	}
	if !st.deferIndex {
		st.index.Put(st.docFor(d))
	}
	if st.journal != nil {
		st.journal.put(d)
	}
}

// removeDataset forgets a purged dataset. Callers hold the write lock.
func (st *readModel) removeDataset(id string) {
	st.publicNames.Store(nil)
	if old := st.datasets[id]; old != nil {
		st.unlinkDataset(old)
		st.rendered.Delete(id)
		delete(st.datasets, id)
		st.index.Delete(id)
		if st.journal != nil {
			st.journal.del(id)
		}
	}
}

func (st *readModel) unlinkDataset(d *Dataset) {
	if st.byName[d.Name] == d.ID {
		delete(st.byName, d.Name)
	}
	for _, r := range d.Resources {
		if st.resources[r.ID] == d.ID {
			delete(st.resources, r.ID)
		}
	}
}

// putOrg stores o unless the cached copy is as new or newer, re-indexing its
// datasets when its name or title changed. Callers hold the write lock.
func (st *readModel) putOrg(o *Organization) {
	if o.isGroup() {
		st.putGroup(o)
		return
	}
	old := st.orgs[o.ID]
	if old != nil {
		if old.Rev >= o.Rev {
			return
		}
		if st.orgByName[old.Name] == o.ID {
			delete(st.orgByName, old.Name)
		}
	}
	st.orgs[o.ID] = o
	st.orgByName[o.Name] = o.ID
	if old != nil && (old.Name != o.Name || old.Title != o.Title) {
		for _, d := range st.datasets {
			if d.OwnerOrg == o.ID {
				st.index.Put(st.docFor(d))
			}
		}
	}
}

func (st *readModel) removeOrg(id string) {
	if st.groups[id] != nil {
		st.removeGroup(id)
		return
	}
	if old := st.orgs[id]; old != nil {
		if st.orgByName[old.Name] == id {
			delete(st.orgByName, old.Name)
		}
		delete(st.orgs, id)
		// its (deleted) datasets no longer carry its name in the index
		for _, d := range st.datasets {
			if d.OwnerOrg == id {
				st.index.Put(st.docFor(d))
			}
		}
	}
}

// dataset finds a dataset by id or name. Callers hold a lock.
func (st *readModel) dataset(idOrName string) *Dataset {
	if d := st.datasets[idOrName]; d != nil {
		return d
	}
	if id, ok := st.byName[idOrName]; ok {
		return st.datasets[id]
	}
	return nil
}

// org finds an organization by id or name. Callers hold a lock.
func (st *readModel) org(idOrName string) *Organization {
	if o := st.orgs[idOrName]; o != nil {
		return o
	}
	if id, ok := st.orgByName[idOrName]; ok {
		return st.orgs[id]
	}
	return nil
}

// The read model's own locking: the methods below take its lock; the
// lower-case helpers they call (putDataset, dataset, ...) expect it held.

// view runs f under the read lock. f reads the read model and returns;
// it calls no store and takes no other lock of the read model.
func (st *readModel) view(f func()) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	f()
}

// viewed is view for a function with a result.
func viewed[T any](st *readModel, f func() T) T {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return f()
}

// viewed2 is view for a function with two results.
func viewed2[A, B any](st *readModel, f func() (A, B)) (A, B) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return f()
}

// cachedDataset is the dataset with id (nil when absent).
func (st *readModel) cachedDataset(id string) *Dataset {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.datasets[id]
}

// datasetNamed is the dataset holding name (nil when none).
func (st *readModel) datasetNamed(name string) *Dataset {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.datasets[st.byName[name]]
}

// lookupDataset is the dataset with id or name (nil when none).
func (st *readModel) lookupDataset(ref string) *Dataset {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.dataset(ref)
}

// cachedGroup is the organization or group with id (nil when absent).
func (st *readModel) cachedGroup(id string) *Organization {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.anyGroup(id)
}

// cachedVocab is the vocabulary with id (nil when absent).
func (st *readModel) cachedVocab(id string) *Vocabulary {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.vocabs[id]
}

// commitDataset applies a dataset write.
func (st *readModel) commitDataset(d *Dataset) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.putDataset(d)
}

// dropDataset applies a dataset purge.
func (st *readModel) dropDataset(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.removeDataset(id)
}

// commitOrg applies an organization or group write.
func (st *readModel) commitOrg(o *Organization) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.putOrg(o)
}

// dropOrg applies an organization or group purge.
func (st *readModel) dropOrg(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.removeOrg(id)
}

// commitVocab applies a vocabulary write.
func (st *readModel) commitVocab(v *Vocabulary) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.putVocab(v)
}

// dropVocab applies a vocabulary deletion.
func (st *readModel) dropVocab(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.removeVocab(id)
}

// advance notes that the read model, current up to marker number from,
// is current up to to (this process raised the marker with nobody
// writing in between).
func (st *readModel) advance(from, to int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.applied == from {
		st.applied = to
	}
}

// putGroup is putOrg for groups: the datasets in a group whose name,
// title, description, image or state changed are re-rendered and
// re-indexed. Callers hold the write lock.
func (st *readModel) putGroup(g *Organization) {
	old := st.groups[g.ID]
	if old != nil {
		if old.Rev >= g.Rev {
			return
		}
		if st.groupByName[old.Name] == g.ID {
			delete(st.groupByName, old.Name)
		}
	}
	st.groups[g.ID] = g
	st.groupByName[g.Name] = g.ID
	if old != nil && (old.Name != g.Name || old.Title != g.Title || old.Description != g.Description ||
		old.ImageURL != g.ImageURL || old.State != g.State) {
		st.refreshGroupDatasets(g.ID)
	}
}

// removeGroup forgets a purged group. Callers hold the write lock.
func (st *readModel) removeGroup(id string) {
	if old := st.groups[id]; old != nil {
		if st.groupByName[old.Name] == id {
			delete(st.groupByName, old.Name)
		}
		delete(st.groups, id)
		st.refreshGroupDatasets(id)
	}
}

// refreshGroupDatasets drops the encoded dicts of the datasets in group id
// and indexes them again.
func (st *readModel) refreshGroupDatasets(id string) {
	for _, d := range st.datasets {
		if slices.Contains(d.Groups, id) {
			st.rendered.Delete(d.ID)
			st.index.Put(st.docFor(d))
		}
	}
}

// lookupGroup finds an organization or group of kind k by id or name.
// Callers hold a lock.
func (st *readModel) lookupGroup(k groupKind, ref string) *Organization {
	if k.org {
		return st.org(ref)
	}
	if g := st.groups[ref]; g != nil {
		return g
	}
	if id, ok := st.groupByName[ref]; ok {
		return st.groups[id]
	}
	return nil
}

// groupsOf is the map of the organizations or of the groups.
func (st *readModel) groupsOf(k groupKind) map[string]*Organization {
	if k.org {
		return st.orgs
	}
	return st.groups
}

// anyGroup finds an organization or group by id. Callers hold a lock.
func (st *readModel) anyGroup(id string) *Organization {
	if o := st.orgs[id]; o != nil {
		return o
	}
	return st.groups[id]
}

// groupByAnyName finds an organization or group by name or id (they share
// one name space). Callers hold a lock.
func (st *readModel) groupByAnyName(ref string) *Organization {
	if o := st.org(ref); o != nil {
		return o
	}
	return st.lookupGroup(grpKind, ref)
}

// putVocab stores v unless the cached copy is as new or newer; a rename
// re-indexes the datasets that carry its tags. Callers hold the write lock.
func (st *readModel) putVocab(v *Vocabulary) {
	old := st.vocabs[v.ID]
	if old != nil {
		if old.Rev >= v.Rev {
			return
		}
		if st.vocabByName[old.Name] == v.ID {
			delete(st.vocabByName, old.Name)
		}
	}
	st.vocabs[v.ID] = v
	st.vocabByName[v.Name] = v.ID
	if old != nil && old.Name != v.Name {
		st.reindexVocab(v.ID)
	}
}

// removeVocab forgets a deleted vocabulary. Callers hold the write lock.
func (st *readModel) removeVocab(id string) {
	if old := st.vocabs[id]; old != nil {
		if st.vocabByName[old.Name] == id {
			delete(st.vocabByName, old.Name)
		}
		delete(st.vocabs, id)
		st.reindexVocab(id)
	}
}

func (st *readModel) reindexVocab(id string) {
	for _, d := range st.datasets {
		if slices.ContainsFunc(d.VocabTags, func(t DatasetTag) bool { return t.VocabularyID == id }) {
			st.index.Put(st.docFor(d))
		}
	}
}

// vocab finds a vocabulary by id or name. Callers hold a lock.
func (st *readModel) vocab(ref string) *Vocabulary {
	if v := st.vocabs[ref]; v != nil {
		return v
	}
	if id, ok := st.vocabByName[ref]; ok {
		return st.vocabs[id]
	}
	return nil
}

// appliedMarker is the marker number the read model is current up to and
// when the marker read that made it so started.
func (st *readModel) appliedMarker() (int64, time.Time) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.applied, st.appliedAt
}

// applyFetched puts records read from the store into the read model and
// notes that it is current up to seq, as read from a marker read that
// started at readAt.
func (st *readModel) applyFetched(f fetched, seq int64, readAt time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, o := range f.os {
		st.putOrg(o)
	}
	for _, id := range f.goneOrg {
		st.removeOrg(id)
	}
	for _, v := range f.vs {
		st.putVocab(v)
	}
	for _, id := range f.goneVocab {
		st.removeVocab(id)
	}
	for _, d := range f.ds {
		st.putDataset(d)
	}
	for _, id := range f.goneDS {
		st.removeDataset(id)
	}
	if seq > st.applied {
		st.applied = seq
		st.appliedAt = readAt
	}
}

// notHeld is refs less the records the read model holds at the claimed
// revision or later.
func (st *readModel) notHeld(refs []changeRef) []changeRef {
	st.mu.RLock()
	defer st.mu.RUnlock()
	need := refs[:0]
	for _, r := range refs {
		switch {
		case r.rev > 0 && r.kind == kindDataset && st.datasets[r.id] != nil && st.datasets[r.id].Rev >= r.rev:
		case r.rev > 0 && r.kind == kindOrg && st.anyGroup(r.id) != nil && st.anyGroup(r.id).Rev >= r.rev:
		case r.rev > 0 && r.kind == kindVocab && st.vocabs[r.id] != nil && st.vocabs[r.id].Rev >= r.rev:
		default:
			need = append(need, r)
		}
	}
	return need
}

// replaceWith takes the records and index of fresh, a read model loaded
// from the store up to marker number seq by a marker read that started at
// readAt.
func (st *readModel) replaceWith(fresh *readModel, seq int64, readAt time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.datasets, st.byName, st.resources = fresh.datasets, fresh.byName, fresh.resources
	st.orgs, st.orgByName, st.index = fresh.orgs, fresh.orgByName, fresh.index
	st.groups, st.groupByName, st.vocabs, st.vocabByName = fresh.groups, fresh.groupByName, fresh.vocabs, fresh.vocabByName
	st.publicNames.Store(nil)
	st.rendered.Clear()
	st.applied = seq
	st.appliedAt = readAt
	if st.journal != nil { // the records file no longer follows the read model
		st.journal.detach()
		st.journal = nil
	}
}

// publicDatasetNames is package_list's list: the names of the active
// public datasets, sorted; computed once after each change.
func (st *readModel) publicDatasetNames() []string {
	st.mu.RLock()
	defer st.mu.RUnlock()
	cached := st.publicNames.Load()
	if cached == nil {
		all := st.sortedNames(func(d *Dataset) bool { return d.State == StateActive && !d.Private })
		cached = &all
		st.publicNames.Store(cached)
	}
	return *cached
}

// lookupResource is the dataset holding resource id and the resource's
// index in it (nil when none).
func (st *readModel) lookupResource(id string) (*Dataset, int) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.findResource(id)
}

// lookupAnyGroup is the organization or group with name or id ref (nil
// when none).
func (st *readModel) lookupAnyGroup(ref string) *Organization {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.groupByAnyName(ref)
}

// lookupGroupOf is the organization (k orgKind) or group (grpKind) with
// name or id ref (nil when none).
func (st *readModel) lookupGroupOf(k groupKind, ref string) *Organization {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.lookupGroup(k, ref)
}

// lookupVocab is the vocabulary with name or id ref (nil when none).
func (st *readModel) lookupVocab(ref string) *Vocabulary {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.vocab(ref)
}
