package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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
	applied   int64
	// appliedAt is when the marker read that made applied current started
	// (catchUp reads the claims made since, less claimMargin).
	appliedAt time.Time
	// publicNames caches package_list's sorted names; nil after any change.
	publicNames atomic.Pointer[[]string]
	// rendered holds each dataset's encoded dict (*renderedDataset by
	// id), filled by readers under the read lock (see datasetJSON).
	rendered sync.Map
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
}

func newReadModel() *readModel {
	return &readModel{
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
	st.index.Put(st.docFor(d))
}

// removeDataset forgets a purged dataset. Callers hold the write lock.
func (st *readModel) removeDataset(id string) {
	st.publicNames.Store(nil)
	if old := st.datasets[id]; old != nil {
		st.unlinkDataset(old)
		st.rendered.Delete(id)
		delete(st.datasets, id)
		st.index.Delete(id)
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

// isoZ formats t for range queries and sorting.
func isoZ(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// Field boosts of CKAN's dismax handler: qf="name^4 title^4 tags^2 groups^2 text".
const (
	boostName = 4
	boostTags = 2
	boostText = 1
)

// docFor builds the search document of d. Callers hold a lock.
func (st *readModel) docFor(d *Dataset) *search.Doc {
	f := map[string][]string{
		"id": {d.ID}, "name": {d.Name}, "title": {d.Title}, "state": {d.State},
		"type": {d.Type}, "dataset_type": {d.Type}, "creator_user_id": {d.CreatorUserID},
		"metadata_created": {isoZ(d.MetadataCreated)}, "metadata_modified": {isoZ(d.MetadataModified)},
		"title_string": {d.Title}, "tags": d.Tags, "site_id": {"default"},
	}
	if d.Private {
		f["capacity"] = []string{"private"}
	} else {
		f["capacity"] = []string{"public"}
	}
	text := map[string]float64{}
	add := func(s string, w float64) {
		for _, t := range search.Tokens(s) {
			text[t] += w
		}
	}
	var all []string
	addField := func(name string, p *string) {
		if p != nil && *p != "" {
			f[name] = []string{*p}
			all = append(all, *p)
		}
	}
	addField("notes", d.Notes)
	addField("author", d.Author)
	addField("maintainer", d.Maintainer)
	addField("license_id", d.LicenseID)
	addField("url", d.URL)
	addField("version", d.Version)
	if d.OwnerOrg != "" {
		f["owner_org"] = []string{d.OwnerOrg}
		if o := st.orgs[d.OwnerOrg]; o != nil {
			f["organization"] = []string{o.Name}
			all = append(all, o.Name, o.Title)
		}
	}
	for _, r := range d.Resources {
		if r.State == StateDeleted {
			continue
		}
		if r.Format != "" {
			f["res_format"] = append(f["res_format"], r.Format)
		}
		if r.Name != nil && *r.Name != "" {
			f["res_name"] = append(f["res_name"], *r.Name)
			all = append(all, *r.Name)
		}
		if r.Description != nil && *r.Description != "" {
			f["res_description"] = append(f["res_description"], *r.Description)
			all = append(all, *r.Description)
		}
		f["res_url"] = append(f["res_url"], r.URL)
		if r.ResourceType != nil {
			f["res_type"] = append(f["res_type"], *r.ResourceType)
		}
	}
	for _, e := range d.Extras {
		f["extras_"+e.Key] = []string{e.Value}
		all = append(all, e.Value)
	}
	all = append(all, st.groupVocabFields(d, f)...)
	text[strings.ToLower(d.Name)] += boostName
	add(d.Name, boostName)
	add(d.Title, boostName)
	for _, t := range d.Tags {
		add(t, boostTags)
		all = append(all, t)
	}
	all = append(all, d.Name, d.Title)
	for _, s := range all {
		add(s, boostText)
	}
	f["text"] = all
	return &search.Doc{
		Ref: d,
		// packageSearch's Allow accepts active public datasets for anyone
		Public: d.State == StateActive && !d.Private,
		ID:     d.ID,
		Fields: f,
		Text:   text,
		Sort: map[string]string{
			"name": d.Name, "title_string": strings.ToLower(d.Title),
			"metadata_modified": isoZ(d.MetadataModified), "metadata_created": isoZ(d.MetadataCreated),
		},
	}
}

// syncer batches freshness checks: every request waits for one check of the
// change marker that started after it arrived; requests arriving while a
// check runs share the next one.
type syncer struct {
	mu      sync.Mutex
	waiting []chan error
	running bool
}

// Sync brings the in-memory catalog up to date with every change committed
// to the store before the call, by whichever process. Actions call it
// first, so a dataset created or changed anywhere is found by the very next
// request.
func (s *Service) Sync(ctx context.Context) error {
	ch := make(chan error, 1)
	s.sy.mu.Lock()
	s.sy.waiting = append(s.sy.waiting, ch)
	if !s.sy.running {
		s.sy.running = true
		go s.syncLoop()
	}
	s.sy.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("catalog sync: %w", ctx.Err())
	}
}

func (s *Service) syncLoop() {
	for {
		s.sy.mu.Lock()
		batch := s.sy.waiting
		s.sy.waiting = nil
		if len(batch) == 0 {
			s.sy.running = false
			s.sy.mu.Unlock()
			return
		}
		s.sy.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.pull(ctx)
		cancel()
		for _, ch := range batch {
			ch <- err
		}
	}
}

// pull applies the changes recorded in the marker since the last pull.
func (s *Service) pull(ctx context.Context) error {
	readAt := time.Now()
	seq, ok, err := s.c.readSeq(ctx)
	if err != nil {
		return err
	}
	s.st.mu.RLock()
	applied := s.st.applied
	s.st.mu.RUnlock()
	if ok && seq == applied {
		return nil
	}
	m, err := s.c.readMarker(ctx)
	if err != nil {
		return err
	}
	if !ok {
		// a store written before the sequence document existed: make it,
		// so that later checks read only that
		if err := s.c.raiseSeq(ctx, m.Seq); err != nil {
			return err
		}
	}
	if m.Seq == applied {
		return nil
	}
	oldest := m.Seq - int64(len(m.Recent)) + 1
	if m.Seq < applied || (len(m.Recent) > 0 && m.Recent[len(m.Recent)-1].Seq != m.Seq) {
		s.log.Info("catalog: the change marker went back or is malformed; reloading", "marker_seq", m.Seq, "applied", applied)
		return s.reloadAll(ctx, m.Seq, readAt)
	}
	if applied+1 < oldest {
		return s.catchUp(ctx, m.Seq, readAt)
	}
	pending := m.Recent[len(m.Recent)-int(m.Seq-applied):]
	refs := make([]changeRef, 0, len(pending))
	for _, e := range pending {
		refs = append(refs, changeRef{kind: e.Kind, id: e.ID})
	}
	f, err := s.fetch(ctx, refs)
	if err != nil {
		return err
	}
	s.apply(f, m.Seq, readAt)
	return nil
}

// loadBatch is how many datasets one read of a full load returns: small
// batches keep the store's work (and its memory) in small steps, so that
// the requests it serves meanwhile wait less behind it.
const loadBatch = 256

// reloadAll rebuilds the in-memory catalog from the store; seq is the marker
// value read before loading, by a read that started at readAt.
func (s *Service) reloadAll(ctx context.Context, seq int64, readAt time.Time) error {
	return s.load(ctx, seq, readAt, false)
}

// load is reloadAll; gentle pauses after each batch of datasets for as
// long as the batch took (see Options.GentleLoad).
func (s *Service) load(ctx context.Context, seq int64, readAt time.Time, gentle bool) error {
	start := time.Now()
	fresh := newReadModel()
	cur, err := s.c.orgs.Find(ctx, bson.M{})
	if err != nil {
		return fmt.Errorf("load organizations: %w", err)
	}
	var orgs []*Organization
	if err := cur.All(ctx, &orgs); err != nil {
		return fmt.Errorf("load organizations: %w", err)
	}
	for _, o := range orgs {
		fresh.putOrg(o)
	}
	if err := s.c.loadVocabs(ctx, fresh); err != nil {
		return err
	}
	cur, err = s.c.datasets.Find(ctx, bson.M{}, options.Find().SetBatchSize(loadBatch))
	if err != nil {
		return fmt.Errorf("load datasets: %w", err)
	}
	defer func() { _ = cur.Close(ctx) }()
	batchStart := time.Now()
	for n := 1; cur.Next(ctx); n++ {
		if gentle && n%loadBatch == 0 {
			took := time.Since(batchStart)
			select {
			case <-time.After(took):
			case <-ctx.Done():
				return fmt.Errorf("load datasets: %w", ctx.Err())
			}
			batchStart = time.Now()
		}
		d := new(Dataset)
		if err := cur.Decode(d); err != nil {
			return fmt.Errorf("decode dataset: %w", err)
		}
		fresh.putDataset(d)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("load datasets: %w", err)
	}
	fresh.applied = seq
	s.st.mu.Lock()
	s.st.datasets, s.st.byName, s.st.resources = fresh.datasets, fresh.byName, fresh.resources
	s.st.orgs, s.st.orgByName, s.st.index = fresh.orgs, fresh.orgByName, fresh.index
	s.st.groups, s.st.groupByName, s.st.vocabs, s.st.vocabByName = fresh.groups, fresh.groupByName, fresh.vocabs, fresh.vocabByName
	s.st.publicNames.Store(nil)
	s.st.rendered.Clear()
	s.st.applied = seq
	s.st.appliedAt = readAt
	s.st.mu.Unlock()
	s.log.Info("catalog loaded", "datasets", len(fresh.datasets), "organizations", len(fresh.orgs), "seq", seq, "took", time.Since(start), "gentle", gentle)
	return nil
}

// sortedNames returns the names of datasets passing keep, ascending
// (bytewise). Callers hold a lock.
func (st *readModel) sortedNames(keep func(*Dataset) bool) []string {
	names := make([]string, 0, len(st.datasets))
	for _, d := range st.datasets {
		if keep(d) {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	return names
}
