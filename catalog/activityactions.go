package catalog

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"toxgate/catalog/ckan"
)

func init() {
	register("package_activity_list", true, "A dataset's activity stream (offset, limit, after, before, activity_types, exclude_activity_types, include_hidden_activity).", packageActivityList)
	register("organization_activity_list", true, "An organization's activity stream: its own and its public datasets'.", organizationActivityList)
	register("group_activity_list", true, "A group's activity stream: its own and its public datasets'.", groupActivityList)
	register("user_activity_list", true, "The activity stream of what a user did.", userActivityList)
	register("recently_changed_packages_activity_list", true, "The site's recent dataset activity (offset, limit).", recentlyChangedPackagesActivityList)
	register("dashboard_activity_list", true, "The caller's activity and that of their organizations and their datasets.", dashboardActivityList)
	register("activity_show", true, "One activity by id.", activityShow)
	register("activity_data_show", true, "The data of one activity (object_type: package, organization, group).", activityDataShow)
	register("activity_diff", true, "A diff of an activity's object against the previous activity of the same object (object_type, diff_type unified, context or html).", activityDiff)
}

// Activity list defaults (ckan.activity_list_limit and
// ckan.activity_list_limit_max).
const (
	DefaultActivityListLimit    = 31
	DefaultActivityListLimitMax = 100
)

// activityQuery is the parsed parameters of an activity list
// (default_activity_list_schema).
type activityQuery struct {
	offset, limit  int
	after, before  time.Time
	types, exclude map[string]bool
	hidden         bool
}

// parseActivityQuery validates the paging and filter parameters;
// withTypes reads activity_types and exclude_activity_types.
func (s *Service) parseActivityQuery(r *Request, withTypes bool) (activityQuery, error) {
	var q activityQuery
	errs := map[string]any{}
	var err *ckan.Error
	if q.offset, err = ckan.Natural(r.Data, "offset", 0); err != nil {
		errs["offset"] = err.Fields["offset"]
	}
	def, maxLimit := s.opts.ActivityListLimit, s.opts.ActivityListLimitMax
	if def <= 0 {
		def = DefaultActivityListLimit
	}
	if maxLimit <= 0 {
		maxLimit = DefaultActivityListLimitMax
	}
	if q.limit, err = ckan.Natural(r.Data, "limit", def); err != nil {
		errs["limit"] = err.Fields["limit"]
	}
	q.limit = min(q.limit, maxLimit)
	for _, k := range []string{"after", "before"} {
		v, ok := r.Data[k]
		if !ok || v == nil {
			continue
		}
		t, ok := floatTimestamp(v)
		if !ok {
			errs[k] = []string{"Must be a float timestamp"}
			continue
		}
		if k == "after" {
			q.after = t
		} else {
			q.before = t
		}
	}
	if withTypes {
		for k, dst := range map[string]*map[string]bool{"activity_types": &q.types, "exclude_activity_types": &q.exclude} {
			v, ok := r.Data[k]
			if !ok || v == nil {
				continue
			}
			list, ok := v.([]any)
			if !ok {
				errs[k] = []string{"Not a list"}
				continue
			}
			*dst = map[string]bool{}
			for _, e := range list {
				es, ok := e.(string)
				if !ok {
					errs[k] = []string{"Not a string"}
					break
				}
				(*dst)[es] = true
			}
		}
	}
	if v, ok := r.Data["include_hidden_activity"]; ok && r.Caller.Sysadmin {
		q.hidden = ckan.SchemaBool(v)
	}
	if len(errs) > 0 {
		return q, ckan.Validation(errs)
	}
	return q, nil
}

// floatTimestamp reads seconds since the epoch (datetime_from_timestamp_validator).
func floatTimestamp(v any) (time.Time, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(ckan.String(map[string]any{"v": v}, "v")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), true
}

// activityFilter selects activities before paging.
type activityFilter func(m *activityMeta) bool

// listActivities pages the activities that keep selects, newest first,
// as CKAN's model functions do (with only after, the oldest after it),
// applying hidden activity, types and the caller's permission labels, and
// renders them with their data.
func (s *Service) listActivities(ctx context.Context, r *Request, q activityQuery, keep activityFilter) ([]*activityDict, error) {
	if err := s.activitySync(ctx); err != nil {
		return nil, err
	}
	var picked []*activityMeta
	s.st.view(func() {
		labels := s.st.userLabels(r.Caller)
		match := func(m *activityMeta) bool {
			if !keep(m) || !s.acts.visible(s.st, m) {
				return false
			}
			if !q.hidden && m.UserID == siteUser {
				return false
			}
			if q.types != nil && !q.types[m.Type] {
				return false
			}
			if q.types == nil && q.exclude != nil && q.exclude[m.Type] {
				return false
			}
			if !q.after.IsZero() && !m.Timestamp.After(q.after) {
				return false
			}
			if !q.before.IsZero() && !m.Timestamp.Before(q.before) {
				return false
			}
			return labels == nil || m.Kind != ActivityPackage || anyLabel(labels, m.Labels)
		}
		x := &s.acts
		x.mu.RLock()
		skip := q.offset
		if !q.after.IsZero() && q.before.IsZero() {
			for _, m := range x.list {
				if q.limit > 0 && len(picked) == q.limit {
					break
				}
				if match(m) {
					if skip > 0 {
						skip--
						continue
					}
					picked = append(picked, m)
				}
			}
			for i, j := 0, len(picked)-1; i < j; i, j = i+1, j-1 {
				picked[i], picked[j] = picked[j], picked[i]
			}
		} else {
			for i := len(x.list) - 1; i >= 0; i-- {
				if q.limit > 0 && len(picked) == q.limit {
					break
				}
				if m := x.list[i]; match(m) {
					if skip > 0 {
						skip--
						continue
					}
					picked = append(picked, m)
				}
			}
		}
		x.mu.RUnlock()
	})
	return s.renderActivities(ctx, picked)
}

// activityDict is an activity as CKAN's activity_dictize renders it.
type activityDict struct {
	ActivityType     string       `json:"activity_type"`
	Data             ckan.RawJSON `json:"data"`
	ID               string       `json:"id"`
	ObjectID         string       `json:"object_id"`
	PermissionLabels []string     `json:"permission_labels"`
	Timestamp        string       `json:"timestamp"`
	UserID           string       `json:"user_id"`
	IsNew            *bool        `json:"is_new,omitempty"`
}

// renderActivities reads the data of each activity (by id, four at a time).
func (s *Service) renderActivities(ctx context.Context, ms []*activityMeta) ([]*activityDict, error) {
	out := make([]*activityDict, len(ms))
	errs := make([]error, len(ms))
	sem := make(chan struct{}, 4)
	done := make(chan struct{}, len(ms))
	for i, m := range ms {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			out[i], errs[i] = s.renderActivity(ctx, m)
		}()
	}
	for range ms {
		<-done
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) renderActivity(ctx context.Context, m *activityMeta) (*activityDict, error) {
	data, err := s.c.activityData(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	// nil (null) for other than package activity, as CKAN stores none
	return &activityDict{ActivityType: m.Type, Data: data, ID: m.ID, ObjectID: m.ObjectID, PermissionLabels: m.Labels,
		Timestamp: ckanTime(m.Timestamp), UserID: m.UserID}, nil
}

// activityListID reads the required id of the *_activity_list actions.
func activityListID(r *Request) (string, error) {
	ref, _ := str(r.Data["id"])
	if _, ok := r.Data["id"]; !ok {
		return "", ckan.FieldError("id", ckan.MsgMissing)
	}
	return ref, nil
}

func packageActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, err := activityListID(r)
	if err != nil {
		return nil, err
	}
	q, err := s.parseActivityQuery(r, true)
	if err != nil {
		return nil, err
	}
	if q.types != nil && q.exclude != nil {
		return nil, ckan.FieldError("activity_types", "Cannot be used together with `exclude_activity_types")
	}
	d, err := s.datasetByRef(ref, "")
	if err != nil {
		return nil, err
	}
	id := d.ID
	return s.listActivities(ctx, r, q, func(m *activityMeta) bool { return m.ObjectID == id })
}

func organizationActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	if _, err := activityListID(r); err != nil {
		return nil, err
	}
	q, err := s.parseActivityQuery(r, true)
	if err != nil {
		return nil, err
	}
	q.exclude = nil // CKAN's organization list takes activity_types only
	o, err := s.orgRef(r)
	if err != nil {
		return nil, err
	}
	// the organization itself and its datasets that are public now
	scope := map[string]bool{o.ID: true}
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if d.OwnerOrg == o.ID && !d.Private {
				scope[d.ID] = true
			}
		}
	})
	return s.listActivities(ctx, r, q, func(m *activityMeta) bool { return scope[m.ObjectID] })
}

func groupActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	if _, err := activityListID(r); err != nil {
		return nil, err
	}
	q, err := s.parseActivityQuery(r, true)
	if err != nil {
		return nil, err
	}
	q.exclude = nil // CKAN's group list takes activity_types only
	g, err := s.groupRef(r, grpKind)
	if err != nil {
		return nil, err
	}
	// the group itself and its datasets that are public now
	scope := map[string]bool{g.ID: true}
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if !d.Private && slices.Contains(d.Groups, g.ID) {
				scope[d.ID] = true
			}
		}
	})
	return s.listActivities(ctx, r, q, func(m *activityMeta) bool { return scope[m.ObjectID] })
}

func userActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	ref, err := activityListID(r)
	if err != nil {
		return nil, err
	}
	q, err := s.parseActivityQuery(r, true)
	if err != nil {
		return nil, err
	}
	q.types, q.exclude = nil, nil // validated, not used, as in CKAN
	u, err := s.c.findUser(ctx, ref)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, ckan.NotFound("")
	}
	return s.listActivities(ctx, r, q, func(m *activityMeta) bool { return m.UserID == u.ID || m.ObjectID == u.ID })
}

func recentlyChangedPackagesActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	q, err := s.parseActivityQuery(r, false)
	if err != nil {
		return nil, err
	}
	// CKAN's model takes offset and limit only here
	q.after, q.before, q.hidden = time.Time{}, time.Time{}, false
	return s.listActivities(ctx, r, q, func(m *activityMeta) bool { return strings.HasSuffix(m.Type, "package") })
}

// dashboardActivityList has no follow feature to draw on: the dashboard is
// the caller's own activity plus the activity of the organizations and
// groups they are a member of (any role) and of their datasets.
func dashboardActivityList(ctx context.Context, s *Service, r *Request) (any, error) {
	q, err := s.parseActivityQuery(r, false)
	if err != nil {
		return nil, err
	}
	q.hidden = false
	me := r.Caller.UserID
	scope := map[string]bool{}
	s.st.view(func() {
		orgs := map[string]bool{}
		for _, o := range s.st.orgs {
			if o.role(me) != "" {
				orgs[o.ID] = true
			}
		}
		groups := map[string]bool{}
		for _, g := range s.st.groups {
			if g.role(me) != "" {
				groups[g.ID] = true
			}
		}
		for id := range orgs {
			scope[id] = true
		}
		for id := range groups {
			scope[id] = true
		}
		for _, d := range s.st.datasets {
			if orgs[d.OwnerOrg] || slices.ContainsFunc(d.Groups, func(id string) bool { return groups[id] }) {
				scope[d.ID] = true
			}
		}
	})
	list, err := s.listActivities(ctx, r, q, func(m *activityMeta) bool { return m.UserID == me || scope[m.ObjectID] })
	if err != nil {
		return nil, err
	}
	f := false
	for _, a := range list {
		a.IsNew = &f // no dashboard views are recorded
	}
	return list, nil
}

// activityByID finds one activity (after get_or_bust on id).
func (s *Service) activityByID(ctx context.Context, r *Request) (*activityMeta, error) {
	id, _ := str(r.Data["id"])
	if id == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	if err := s.activitySync(ctx); err != nil {
		return nil, err
	}
	var m *activityMeta
	s.st.view(func() {
		s.acts.mu.RLock()
		m = s.acts.byID[id]
		if m != nil && !s.acts.visible(s.st, m) {
			m = nil
		}
		s.acts.mu.RUnlock()
	})
	if m == nil {
		return nil, ckan.NotFound("")
	}
	return m, nil
}

func activityShow(ctx context.Context, s *Service, r *Request) (any, error) {
	m, err := s.activityByID(ctx, r)
	if err != nil {
		return nil, err
	}
	return s.renderActivity(ctx, m)
}

func activityDataShow(ctx context.Context, s *Service, r *Request) (any, error) {
	m, err := s.activityByID(ctx, r)
	if err != nil {
		return nil, err
	}
	a, err := s.renderActivity(ctx, m)
	if err != nil {
		return nil, err
	}
	objectType, _ := str(r.Data["object_type"])
	if objectType == "" {
		return a.Data, nil
	}
	member, ok, err := jsonMember(a.Data, objectType)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ckan.NotFound("Could not find that object_type in the activity")
	}
	return member, nil
}
