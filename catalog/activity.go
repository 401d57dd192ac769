package catalog

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/ckan"
)

// Collections of the activity stream (ckanext-activity's activity table,
// split so that the small part can be loaded at once).
const (
	// CollActivity holds one small document per activity (who, when,
	// what, about which object and revision).
	CollActivity = "activity"
	// CollActivityData holds each activity's data member, encoded as JSON,
	// under the activity's id.
	CollActivityData = "activity_data"
)

// Activity object kinds, as CKAN names them in activity types.
const (
	ActivityPackage      = "package"
	ActivityOrganization = "organization"
	ActivityGroup        = "group"
)

// siteUser is the user_id of activity that no user caused (the DataStore
// loader marking a resource datastore_active). Like CKAN's site user, its
// activity is hidden unless include_hidden_activity is set by a sysadmin.
const siteUser = "site"

// activityMeta is an activity without its data. It is stored as
// {_id, m: <its JSON>}: the embedded store decodes a document field by
// field, and one string loads about 7 times faster than these fields (the
// index is loaded whole).
type activityMeta struct {
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	UserID    string    `json:"user_id"`
	ObjectID  string    `json:"object_id"`
	Kind      string    `json:"object_kind"`
	Type      string    `json:"activity_type"`
	Labels    []string  `json:"permission_labels"`
	// Rev and Created name the object's revision whose write this activity
	// records (see recordActivity).
	Rev     int64     `json:"rev"`
	Created time.Time `json:"object_created"`
	// Purged marks the document that says the object was purged (then
	// Rev is its last revision); such a document is no activity.
	Purged bool `json:"purged,omitempty"`
}

// storedMeta is an activityMeta as stored.
type storedMeta struct {
	ID string `bson:"_id"`
	M  string `bson:"m"`
}

// putMeta writes m (replacing the document of the same id).
func (c recordStore) putMeta(ctx context.Context, m *activityMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode activity %s: %w", m.ID, err)
	}
	if err := c.upsertNew(ctx, c.activity, m.ID, storedMeta{ID: m.ID, M: string(b)}); err != nil {
		return fmt.Errorf("write activity %s: %w", m.ID, err)
	}
	return nil
}

// getMeta reads one activity by id (nil when absent).
func (c recordStore) getMeta(ctx context.Context, id string) (*activityMeta, error) {
	var sm storedMeta
	err := c.activity.FindOne(ctx, bson.M{"_id": id}).Decode(&sm)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load activity %s: %w", id, err)
	}
	return decodeMeta(sm)
}

func decodeMeta(sm storedMeta) (*activityMeta, error) {
	m := new(activityMeta)
	if err := json.Unmarshal([]byte(sm.M), m); err != nil {
		return nil, fmt.Errorf("decode activity %s: %w", sm.ID, err)
	}
	m.ID = sm.ID
	return m, nil
}

// activityChange is one write for the activity hook (recordActivity).
type activityChange struct {
	// Kind is ActivityPackage, ActivityOrganization or ActivityGroup.
	Kind string
	// Verb is "new", "changed" or "deleted"; the type is Verb + " " + Kind.
	Verb string
	// ID, Rev and Created are the object's id, the revision being
	// written and the object's creation time.
	ID      string
	Rev     int64
	Created time.Time
	// Data is the activity's data member ({"package": dict, "actor":
	// name} or {"group": dict}).
	Data map[string]any
	// Labels are the permission labels (packages only).
	Labels []string
}

// actor is who causes the writes of one action, carried in its context.
type actor struct {
	userID, name, siteURL string
	sysadmin              bool
}

type actorKey struct{}

// withActor returns ctx carrying the caller of an action, for the activity
// hook deep in the write path.
func withActor(ctx context.Context, c Caller, siteURL string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor{userID: c.UserID, name: c.Name, siteURL: siteURL, sysadmin: c.Sysadmin})
}

func actorFrom(ctx context.Context) actor {
	a, _ := ctx.Value(actorKey{}).(actor)
	if a.userID == "" {
		a.userID = siteUser
	}
	return a
}

// activityID is the id of the activity of revision rev of an object: the
// same for every writer of that revision, so that a writer that wins a
// revision after another died between its activity and its record write
// replaces that writer's activity (see recordActivity).
func activityID(kind, id string, created time.Time, rev int64) string {
	h := sha1.Sum([]byte("toxgate-activity:" + kind + ":" + id + ":" + strconv.FormatInt(created.UnixMilli(), 10) + "@" + strconv.FormatInt(rev, 10)))
	var b [16]byte
	copy(b[:], h[:16])
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// activityVerb is the activity of a write from a state to the next ("" for
// none): CKAN emits "deleted" once, and nothing for changes of an object
// that stays deleted.
func activityVerb(created bool, before, after string) string {
	switch {
	case created:
		return "new"
	case after == StateDeleted && before == StateDeleted:
		return ""
	case after == StateDeleted:
		return "deleted"
	}
	return "changed"
}

// datasetActivity is the activity of writing next over base (nil: a new
// dataset); nil when the write is no activity.
func (s *Service) datasetActivity(ctx context.Context, base, next *Dataset) *activityChange {
	before := ""
	if base != nil {
		before = base.State
	}
	verb := activityVerb(base == nil, before, next.State)
	if verb == "" {
		return nil
	}
	a := actorFrom(ctx)
	dict := viewed(s.st, func() *DatasetDict { return s.st.datasetDict(next, a.siteURL) })
	var name any
	if a.name != "" {
		name = a.name
	}
	return &activityChange{Kind: ActivityPackage, Verb: verb, ID: next.ID, Rev: next.Rev, Created: next.MetadataCreated,
		Data: map[string]any{"package": dict, "actor": name}, Labels: datasetLabels(next)}
}

// orgTableDict is an organization or group as CKAN's table_dictize of its
// row (the data of its activities).
func orgTableDict(o *Organization, kind string) map[string]any {
	return map[string]any{
		"id": o.ID, "name": o.Name, "title": o.Title, "type": kind, "description": o.Description,
		"image_url": o.ImageURL, "created": ckanTime(o.Created), "is_organization": kind == ActivityOrganization,
		"approval_status": "approved", "state": o.State,
	}
}

// orgActivity is the activity of writing next over base (nil: created)
// for an organization or a group (kind from next.typeName()). Membership
// changes alone are no activity, as in CKAN.
func orgActivity(base, next *Organization) *activityChange {
	kind := next.typeName()
	before := ""
	if base != nil {
		before = base.State
		same := fmt.Sprint(orgTableDict(base, kind)) == fmt.Sprint(orgTableDict(next, kind)) &&
			fmt.Sprint(base.Extras) == fmt.Sprint(next.Extras)
		if same {
			return nil
		}
	}
	verb := activityVerb(base == nil, before, next.State)
	if verb == "" {
		return nil
	}
	return &activityChange{Kind: kind, Verb: verb, ID: next.ID, Rev: next.Rev, Created: next.Created,
		Data: map[string]any{"group": orgTableDict(next, kind)}}
}

// recordActivity is the activity hook of the write path: it stores the
// activity of ch (nil: none) before the write of the record it describes.
// Every writer calls it after winning the claim of the record's revision
// (recordStore.replaceThen) or before inserting a new record, so a record
// revision that reached the store always has its activity; an activity
// whose record write never happened (the process died in between) names a
// revision above the record's and is not shown, and is replaced by the
// activity of whoever writes that revision later (same id).
func (s *Service) recordActivity(ctx context.Context, ch *activityChange) error {
	if ch == nil {
		return nil
	}
	a := actorFrom(ctx)
	m := &activityMeta{ID: activityID(ch.Kind, ch.ID, ch.Created, ch.Rev), Timestamp: now(), UserID: a.userID,
		ObjectID: ch.ID, Kind: ch.Kind, Type: ch.Verb + " " + ch.Kind, Labels: ch.Labels, Rev: ch.Rev, Created: ch.Created}
	data, err := ckan.Marshal(ch.Data)
	if err != nil {
		return fmt.Errorf("activity data: %w", err)
	}
	// the data and the listing document are independent writes: they go
	// to the store together (each shares its round trip with other
	// writers', see store_group.go)
	wrote := make(chan error, 1)
	go func() {
		wrote <- s.c.upsertNew(ctx, s.c.activityDataColl, m.ID, bson.M{"_id": m.ID, "data": string(data)})
	}()
	merr := s.c.putMeta(ctx, m)
	if err := <-wrote; err != nil {
		return fmt.Errorf("write activity data %s: %w", m.ID, err)
	}
	if merr != nil {
		return merr
	}
	s.acts.put(m)
	return nil
}

// purgeMarkID is the _id of the mark that an object was purged.
func purgeMarkID(key string) string { return "purged:" + key }

// recordPurge is the activity hook of a purge, called before the record
// is deleted: it marks the object purged, so that its activity stays shown
// (CKAN keeps it), while the activity of an object that was never written
// (a create whose insert failed, or whose process died after its
// activity) is not: an object absent from the catalog shows its activity
// only with this mark. rev is the object's last revision.
func (s *Service) recordPurge(ctx context.Context, kind, id string, created time.Time, rev int64) error {
	key := objectKey(kind, id, created)
	m := &activityMeta{ID: purgeMarkID(key), Timestamp: now(), ObjectID: id, Kind: kind, Rev: rev, Created: created, Purged: true}
	if err := s.c.putMeta(ctx, m); err != nil {
		return err
	}
	s.acts.mu.Lock()
	if s.acts.loaded {
		s.acts.purged[key] = true
	}
	s.acts.mu.Unlock()
	return nil
}

// activityIndex is the in-memory list of activities (without their data),
// loaded on first use and brought up to date from the object revisions of
// the in-memory catalog (activitySync).
type activityIndex struct {
	mu     sync.RWMutex
	loaded bool
	byID   map[string]*activityMeta
	// list is sorted by olderActivity.
	list []*activityMeta
	// seen is, per object (objectKey), the revision up to which its
	// activities are indexed.
	seen map[string]int64
	// purged holds the objects (objectKey) marked purged.
	purged map[string]bool
	// loadMu serializes loading and syncing.
	loadMu sync.Mutex
}

func objectKey(kind, id string, created time.Time) string {
	return kind + ":" + id + ":" + strconv.FormatInt(created.UnixMilli(), 10)
}

// olderActivity orders activities by time; within one millisecond by the
// revision they record (so one object's are in the order of its writes),
// then by id.
func olderActivity(a, b *activityMeta) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	if a.Rev != b.Rev {
		return a.Rev < b.Rev
	}
	return a.ID < b.ID
}

// put adds or replaces m (once the index is loaded; before, the load reads
// it from the store).
func (x *activityIndex) put(m *activityMeta) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.loaded {
		return
	}
	x.putLocked(m)
}

func (x *activityIndex) putLocked(m *activityMeta) {
	if old := x.byID[m.ID]; old != nil {
		i := sort.Search(len(x.list), func(i int) bool { return !olderActivity(x.list[i], old) })
		if i < len(x.list) && x.list[i] == old {
			x.list = append(x.list[:i], x.list[i+1:]...)
		}
	}
	x.byID[m.ID] = m
	i := len(x.list)
	for i > 0 && olderActivity(m, x.list[i-1]) {
		i--
	}
	x.list = append(x.list, nil)
	copy(x.list[i+1:], x.list[i:])
	x.list[i] = m
}

// activityObject is an object of the in-memory catalog that has
// activities.
type activityObject struct {
	kind, id string
	rev      int64
	created  time.Time
}

// activityObjects lists the objects that have activities, with their
// current revision. Callers hold a lock.
func (st *readModel) activityObjects() []activityObject {
	out := make([]activityObject, 0, len(st.datasets)+len(st.orgs)+len(st.groups))
	for _, d := range st.datasets {
		out = append(out, activityObject{ActivityPackage, d.ID, d.Rev, d.MetadataCreated})
	}
	for _, o := range st.orgs {
		out = append(out, activityObject{ActivityOrganization, o.ID, o.Rev, o.Created})
	}
	for _, g := range st.groups {
		out = append(out, activityObject{ActivityGroup, g.ID, g.Rev, g.Created})
	}
	return out
}

// activityObjectRev is the current revision and creation time of an
// object (ok false: not in the catalog). Callers hold a lock.
func (st *readModel) activityObjectRev(kind, id string) (rev int64, created time.Time, ok bool) {
	switch kind {
	case ActivityPackage:
		if d := st.datasets[id]; d != nil {
			return d.Rev, d.MetadataCreated, true
		}
	case ActivityOrganization:
		if o := st.orgs[id]; o != nil {
			return o.Rev, o.Created, true
		}
	case ActivityGroup:
		if g := st.groups[id]; g != nil {
			return g.Rev, g.Created, true
		}
	}
	return 0, time.Time{}, false
}

// activitySync brings the activity index up to date with the in-memory
// catalog, which Sync made current: it loads the index on first use, then
// reads the activities of the revisions written since (by this process or
// another) by their ids.
func (s *Service) activitySync(ctx context.Context) error {
	x := &s.acts
	x.loadMu.Lock()
	defer x.loadMu.Unlock()
	objs := viewed(s.st, s.st.activityObjects)
	x.mu.RLock()
	loaded := x.loaded
	x.mu.RUnlock()
	if !loaded {
		// every activity is written before its record: those of the
		// revisions listed above are in the store now
		cur, err := s.c.activity.Find(ctx, bson.M{})
		if err != nil {
			return fmt.Errorf("load activity: %w", err)
		}
		var all []*activityMeta
		for cur.Next(ctx) {
			var sm storedMeta
			if err := cur.Decode(&sm); err != nil {
				return fmt.Errorf("load activity: %w", err)
			}
			m, err := decodeMeta(sm)
			if err != nil {
				return err
			}
			all = append(all, m)
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("load activity: %w", err)
		}
		_ = cur.Close(ctx)
		sort.Slice(all, func(i, j int) bool { return olderActivity(all[i], all[j]) })
		x.mu.Lock()
		x.byID, x.seen, x.purged, x.list = make(map[string]*activityMeta, len(all)), map[string]int64{}, map[string]bool{}, all[:0]
		for _, m := range all {
			if m.Purged {
				x.purged[objectKey(m.Kind, m.ObjectID, m.Created)] = true
				continue
			}
			x.byID[m.ID] = m
			x.list = append(x.list, m)
		}
		for _, o := range objs {
			x.seen[objectKey(o.kind, o.id, o.created)] = o.rev
		}
		x.loaded = true
		x.mu.Unlock()
		return nil
	}
	current := make(map[string]bool, len(objs))
	for _, o := range objs {
		key := objectKey(o.kind, o.id, o.created)
		current[key] = true
		if err := s.fetchActivities(ctx, o, key); err != nil {
			return err
		}
	}
	// objects gone since: purged (by any process), with a mark naming
	// their last revision
	x.mu.RLock()
	var gone []string
	for key := range x.seen {
		if !current[key] {
			gone = append(gone, key)
		}
	}
	x.mu.RUnlock()
	for _, key := range gone {
		mark, err := s.c.getMeta(ctx, purgeMarkID(key))
		if err != nil {
			return err
		}
		if mark != nil {
			if err := s.fetchActivities(ctx, activityObject{mark.Kind, mark.ObjectID, mark.Rev, mark.Created}, key); err != nil {
				return err
			}
		}
		x.mu.Lock()
		if mark != nil {
			x.purged[key] = true
		}
		delete(x.seen, key)
		x.mu.Unlock()
	}
	return nil
}

// warmActivity loads the activity index in the background after start,
// so that the first activity request does not wait for it (requests that
// come earlier wait for the load).
func (s *Service) warmActivity() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	if err := s.activitySync(ctx); err != nil {
		s.log.Warn("activity index not loaded; the first activity request loads it", "err", err)
		return
	}
	s.acts.mu.RLock()
	n := len(s.acts.list)
	s.acts.mu.RUnlock()
	s.log.Debug("activity index loaded", "activities", n, "took", time.Since(start))
}

// fetchActivities reads the activities of o's revisions above those
// indexed, by their ids. Callers hold loadMu.
func (s *Service) fetchActivities(ctx context.Context, o activityObject, key string) error {
	x := &s.acts
	x.mu.RLock()
	from := x.seen[key]
	x.mu.RUnlock()
	for rev := from + 1; rev <= o.rev; rev++ {
		m, err := s.c.getMeta(ctx, activityID(o.kind, o.id, o.created, rev))
		if err != nil {
			return err
		}
		if m == nil {
			continue // a write that is no activity (a membership change)
		}
		x.mu.Lock()
		x.putLocked(m)
		x.mu.Unlock()
	}
	if o.rev > from {
		x.mu.Lock()
		x.seen[key] = o.rev
		x.mu.Unlock()
	}
	return nil
}

// visible reports whether m records a revision that was written: an
// activity of a revision above its object's current one belongs to a write
// still under way or one that died before its record write, and that of an
// object absent from the catalog is shown only when the object was purged
// (recordPurge). Callers hold x.mu and run in a view of the read model.
func (x *activityIndex) visible(st *readModel, m *activityMeta) bool {
	rev, created, ok := st.activityObjectRev(m.Kind, m.ObjectID)
	if ok && created.Equal(m.Created) {
		return m.Rev <= rev
	}
	return x.purged[objectKey(m.Kind, m.ObjectID, m.Created)]
}

// activityData reads the data of one activity (its JSON encoding).
func (c recordStore) activityData(ctx context.Context, id string) (ckan.RawJSON, error) {
	var doc struct {
		Data string `bson:"data"`
	}
	err := c.activityDataColl.FindOne(ctx, bson.M{"_id": id}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ckan.RawJSON("{}"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("load activity data %s: %w", id, err)
	}
	return ckan.RawJSON(doc.Data), nil
}
