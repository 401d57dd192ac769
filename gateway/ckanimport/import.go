// Package ckanimport copies a CKAN site's catalog into toxgate (or any CKAN)
// through both sites' action APIs, as ckanext-harvest's CKAN harvester does:
// organizations, groups, datasets and resources keep their ids and names,
// uploaded files are copied on request, and a run copies only what changed
// at the source since the previous one (the state file) and resumes after
// an interruption. See README.md.
package ckanimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"toxgate/internal/egress"
)

// Options configure an import.
type Options struct {
	From      string // the source site's base URL
	FromToken string // an API token for the source (optional: anonymous reads public data)
	To        string // the target site's base URL
	Token     string // a sysadmin's API token on the target (ids are kept only for sysadmins)
	Org       string // copy only this organization (name or id) and its datasets
	// Since copies datasets modified at the source at or after this time
	// instead of since the previous run.
	Since     time.Time
	WithFiles bool   // copy uploaded files (download from the source, upload to the target)
	StatePath string // the state file (DefaultStatePath)
	PageSize  int    // datasets per package_search page (default 100)
	// HTTP is the client for the target (nil: a plain client). The source
	// and every file URL it names are reached through Egress instead.
	HTTP *http.Client
	// Egress is the policy for the source and its file URLs (nil: the
	// default policy). The source's own host and port (From) are allowed
	// in addition, since the operator named them; a file URL pointing
	// elsewhere, or a redirect, is checked like any outbound fetch.
	Egress *egress.Policy
	// IdleTimeout aborts a file download whose server sends nothing for
	// this long (0: 30 seconds).
	IdleTimeout time.Duration
	// MaxFileBytes is the largest file copied (0: 1 GiB); a larger one
	// fails its dataset.
	MaxFileBytes int64
	Progress     Progress
	Log          *slog.Logger
}

// Outcome is what happened to one dataset.
type Outcome string

// The outcomes of a dataset.
const (
	Created Outcome = "created"
	Updated Outcome = "updated"
	Failed  Outcome = "failed"
)

// Progress receives the run's progress (a progress bar on a terminal).
type Progress interface {
	// Total is the number of datasets this run has to look at (from the
	// source's count when it starts).
	Total(n int)
	// Dataset is called after each dataset.
	Dataset(name string, o Outcome)
}

// Stats is what a run did.
type Stats struct {
	Organizations, Groups    int // created or updated
	Vocabularies             int // created or given more tags
	Created, Updated, Failed int // datasets
	Files                    int // files copied
	FileBytes                int64
	Resumed                  bool     // the previous run had not finished
	GroupsSkipped            string   // why groups were not copied, if they were not
	VocabulariesSkipped      string   // why vocabularies (and their tags on datasets) were not copied
	Failures                 []string // one line per failed dataset
	Since                    string   // the mark this run started from ("" for everything)
}

type nopProgress struct{}

func (nopProgress) Total(int)               {}
func (nopProgress) Dataset(string, Outcome) {}

type importer struct {
	o         Options
	src, dst  *client
	log       *slog.Logger
	stats     Stats
	noGroups  bool
	orgName   string            // the name of Options.Org at the source
	vocabs    map[string]string // source vocabulary id -> target vocabulary id
	tmpDir    string
	state     State
	statePath string
}

// Run imports. An interrupted run (ctx cancelled) returns ctx's error with
// the state saved; the next run goes on from there.
func Run(ctx context.Context, o Options) (Stats, error) {
	if o.From == "" || o.To == "" {
		return Stats{}, errors.New("both the source (--from) and the target (--to) are needed")
	}
	if o.Token == "" {
		return Stats{}, errors.New("the target needs a sysadmin's API token (--token)")
	}
	for _, u := range []string{o.From, o.To} {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return Stats{}, fmt.Errorf("%q is not an http(s) URL", u)
		}
	}
	if o.HTTP == nil {
		// No overall timeout (a file may take long); a site that does not
		// start answering within 2 minutes is an error.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = 2 * time.Minute
		o.HTTP = &http.Client{Transport: tr}
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Second
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 1 << 30
	}
	srcPolicy, err := o.Egress.WithAllowed(siteHostPort(o.From))
	if err != nil {
		return Stats{}, fmt.Errorf("--from %s: %w", o.From, err)
	}
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	from, to := strings.TrimRight(o.From, "/"), strings.TrimRight(o.To, "/")
	if o.StatePath == "" {
		p, err := DefaultStatePath(from, to, o.Org)
		if err != nil {
			return Stats{}, err
		}
		o.StatePath = p
	}
	im := &importer{o: o, log: o.Log, statePath: o.StatePath,
		src: &client{base: from, token: o.FromToken, http: srcPolicy.Client(0), callTimeout: 2 * time.Minute, idle: o.IdleTimeout, maxBytes: o.MaxFileBytes},
		dst: &client{base: to, token: o.Token, http: o.HTTP, callTimeout: 2 * time.Minute}}
	st, err := loadState(o.StatePath)
	if err != nil {
		return Stats{}, err
	}
	if st.From != "" && (st.From != from || st.To != to || st.Org != o.Org) {
		return Stats{}, fmt.Errorf("the state file %s belongs to an import from %s to %s (org %q): pass another --state", o.StatePath, st.From, st.To, st.Org)
	}
	im.stats.Resumed = st.From != "" && !st.Complete
	st.From, st.To, st.Org = from, to, o.Org
	if !o.Since.IsZero() {
		st.Mark, st.AtMark = o.Since.UTC().Format("2006-01-02T15:04:05.999999"), nil
	}
	im.stats.Since = st.Mark
	st.Complete = false
	im.state = st
	if o.WithFiles {
		dir, err := os.MkdirTemp("", "toxgate-import-")
		if err != nil {
			return im.stats, err
		}
		im.tmpDir = dir
		defer os.RemoveAll(dir)
	}
	if err := im.orgs(ctx); err != nil {
		return im.stats, err
	}
	if err := im.groups(ctx); err != nil {
		return im.stats, err
	}
	if err := im.vocabularies(ctx); err != nil {
		return im.stats, err
	}
	if err := im.datasets(ctx); err != nil {
		return im.stats, err
	}
	im.state.Complete = true
	return im.stats, im.state.save(im.statePath)
}

// siteHostPort is the host:port of a site's base URL (the scheme's port
// when it names none), as an egress allow entry.
func siteHostPort(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// groupFields are the organization and group fields copied.
var groupFields = []string{"id", "name", "title", "description", "image_url", "extras", "type", "approval_status"}

// upsertGroup copies one organization or group (kind) dict to the target,
// keeping its id and name; an existing one is patched when it differs.
func (im *importer) upsertGroup(ctx context.Context, kind string, m map[string]any) (bool, error) {
	payload := map[string]any{}
	for _, k := range groupFields {
		if v, ok := m[k]; ok && v != nil {
			payload[k] = v
		}
	}
	if kind == "group" {
		delete(payload, "type")
	}
	var have map[string]any
	err := im.dst.call(ctx, kind+"_show", map[string]any{"id": m["id"], "include_datasets": false, "include_users": false}, &have)
	switch {
	case notFound(err):
		return true, im.dst.call(ctx, kind+"_create", payload, nil)
	case err != nil:
		return false, err
	}
	same := true
	for _, k := range []string{"name", "title", "description", "image_url"} {
		if fmt.Sprint(have[k]) != fmt.Sprint(payload[k]) {
			same = false
		}
	}
	if same && have["state"] == "active" {
		return false, nil
	}
	payload["state"] = "active"
	return true, im.dst.call(ctx, kind+"_patch", payload, nil)
}

func (im *importer) orgs(ctx context.Context) error {
	names := []string{im.o.Org}
	if im.o.Org == "" {
		var err error
		if names, err = im.listAll(ctx, "organization_list"); err != nil {
			return fmt.Errorf("list the source's organizations: %w", err)
		}
	}
	for _, n := range names {
		var m map[string]any
		if err := im.src.call(ctx, "organization_show", map[string]any{"id": n, "include_datasets": false, "include_users": false}, &m); err != nil {
			return fmt.Errorf("read organization %s at the source: %w", n, err)
		}
		if im.o.Org != "" {
			im.orgName, _ = m["name"].(string)
		}
		changed, err := im.upsertGroup(ctx, "organization", m)
		if err != nil {
			return fmt.Errorf("copy organization %s: %w", n, err)
		}
		if changed {
			im.stats.Organizations++
		}
	}
	return nil
}

func (im *importer) groups(ctx context.Context) error {
	names, err := im.listAll(ctx, "group_list")
	if unknownAction(err) {
		im.stats.GroupsSkipped = "the source has no groups (group_list is not offered)"
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the source's groups: %w", err)
	}
	for _, n := range names {
		var m map[string]any
		if err := im.src.call(ctx, "group_show", map[string]any{"id": n, "include_datasets": false, "include_users": false}, &m); err != nil {
			return fmt.Errorf("read group %s at the source: %w", n, err)
		}
		changed, err := im.upsertGroup(ctx, "group", m)
		if unknownAction(err) {
			im.noGroups = true
			im.stats.GroupsSkipped = "the target has no groups (group_create is not offered); datasets are copied without them"
			return nil
		}
		if err != nil {
			return fmt.Errorf("copy group %s: %w", n, err)
		}
		if changed {
			im.stats.Groups++
		}
	}
	return nil
}

// vocabulary is a vocabulary_list/vocabulary_show dict.
type vocabulary struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
}

// vocabularies copies the source's tag vocabularies by name (CKAN's
// vocabulary_create takes no id): a missing one is created with its tags, an
// existing one gets the tags it lacks (none are taken away: the target's
// datasets may use them). Datasets' vocabulary tags then name the target's
// vocabulary id.
func (im *importer) vocabularies(ctx context.Context) error {
	var src []vocabulary
	err := im.src.call(ctx, "vocabulary_list", map[string]any{}, &src)
	if unknownAction(err) {
		im.stats.VocabulariesSkipped = "the source has no tag vocabularies (vocabulary_list is not offered)"
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the source's vocabularies: %w", err)
	}
	im.vocabs = map[string]string{}
	for _, v := range src {
		var have vocabulary
		err := im.dst.call(ctx, "vocabulary_show", map[string]any{"id": v.Name}, &have)
		if unknownAction(err) {
			im.stats.VocabulariesSkipped = "the target has no tag vocabularies (vocabulary_create is not offered); datasets are copied without their vocabulary tags"
			im.vocabs = nil
			return nil
		}
		tags := make([]any, 0, len(v.Tags))
		for _, t := range v.Tags {
			tags = append(tags, map[string]any{"name": t.Name})
		}
		switch {
		case notFound(err):
			if err := im.dst.call(ctx, "vocabulary_create", map[string]any{"name": v.Name, "tags": tags}, &have); err != nil {
				return fmt.Errorf("copy vocabulary %s: %w", v.Name, err)
			}
			im.stats.Vocabularies++
		case err != nil:
			return fmt.Errorf("copy vocabulary %s: %w", v.Name, err)
		default:
			held := map[string]bool{}
			all := make([]any, 0, len(have.Tags)+len(tags))
			for _, t := range have.Tags {
				held[t.Name] = true
				all = append(all, map[string]any{"name": t.Name})
			}
			missing := false
			for _, t := range v.Tags {
				if !held[t.Name] {
					missing = true
					all = append(all, map[string]any{"name": t.Name})
				}
			}
			if missing {
				if err := im.dst.call(ctx, "vocabulary_update", map[string]any{"id": have.ID, "tags": all}, nil); err != nil {
					return fmt.Errorf("copy vocabulary %s: %w", v.Name, err)
				}
				im.stats.Vocabularies++
			}
		}
		im.vocabs[v.ID] = have.ID
	}
	return nil
}

// listAll reads every name of organization_list or group_list, 1000 at a
// time (CKAN's largest page, ckan.group_and_organization_list_max).
func (im *importer) listAll(ctx context.Context, action string) ([]string, error) {
	const limit = 1000
	var all []string
	seen := map[string]bool{}
	for offset := 0; ; offset += limit {
		var page []string
		if err := im.src.call(ctx, action, map[string]any{"limit": limit, "offset": offset, "all_fields": false}, &page); err != nil {
			return nil, err
		}
		fresh := 0
		for _, n := range page {
			if !seen[n] {
				seen[n] = true
				all = append(all, n)
				fresh++
			}
		}
		// A short page is the last; a site that ignores offset repeats itself.
		if len(page) < limit || fresh == 0 {
			return all, nil
		}
	}
}

// searchFQ is the filter of the datasets a run copies.
func (im *importer) searchFQ() string {
	var parts []string
	if im.orgName != "" {
		parts = append(parts, "organization:"+im.orgName)
	}
	if im.state.Mark != "" {
		if t, ok := parseStamp(im.state.Mark); ok {
			parts = append(parts, "metadata_modified:["+t.UTC().Format("2006-01-02T15:04:05.000000Z")+" TO *]")
		}
	}
	return strings.Join(parts, " AND ")
}

func parseStamp(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type searchPage struct {
	Count   int              `json:"count"`
	Results []map[string]any `json:"results"`
}

func (im *importer) search(ctx context.Context, start, rows int) (searchPage, error) {
	args := map[string]any{"q": "*:*", "sort": "metadata_modified asc", "start": start, "rows": rows,
		"include_private": im.o.FromToken != ""}
	if fq := im.searchFQ(); fq != "" {
		args["fq"] = fq
	}
	var p searchPage
	if err := im.src.call(ctx, "package_search", args, &p); err != nil {
		return p, fmt.Errorf("search the source: %w", err)
	}
	return p, nil
}

// datasets copies the source's datasets in order of metadata_modified,
// pages starting at the mark, and moves the mark after each one.
func (im *importer) datasets(ctx context.Context) error {
	first, err := im.search(ctx, 0, 0)
	if err != nil {
		return err
	}
	atMark := map[string]bool{}
	for _, id := range im.state.AtMark {
		atMark[id] = true
	}
	total := first.Count - len(atMark)
	im.o.Progress.Total(max(total, 0))
	offset := 0
	for {
		page, err := im.search(ctx, offset, im.o.PageSize)
		if err != nil {
			return err
		}
		progressed := false
		for _, pkg := range page.Results {
			id, _ := pkg["id"].(string)
			mod, _ := pkg["metadata_modified"].(string)
			name, _ := pkg["name"].(string)
			if mod == im.state.Mark && atMark[id] {
				continue
			}
			if _, ok := parseStamp(mod); !ok || id == "" {
				return fmt.Errorf("the source's dataset %q has no id or metadata_modified", name)
			}
			outcome, err := im.copyDataset(ctx, pkg)
			if ctx.Err() != nil {
				_ = im.state.save(im.statePath)
				return ctx.Err()
			}
			if err != nil {
				outcome = Failed
				im.stats.Failed++
				im.stats.Failures = append(im.stats.Failures, fmt.Sprintf("%s (%s): %v", name, id, err))
				im.log.Warn("dataset not copied", "name", name, "id", id, "err", err)
			} else if outcome == Created {
				im.stats.Created++
			} else {
				im.stats.Updated++
			}
			if mod != im.state.Mark {
				im.state.Mark, atMark = mod, map[string]bool{}
				offset = 0
			}
			atMark[id] = true
			im.state.AtMark = keys(atMark)
			if err := im.state.save(im.statePath); err != nil {
				return err
			}
			progressed = true
			im.o.Progress.Dataset(name, outcome)
		}
		if len(page.Results) < im.o.PageSize {
			return nil
		}
		if !progressed {
			// A full page of datasets modified at the same instant, all
			// done: page past them.
			offset += len(page.Results)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// datasetFields are the dataset fields copied as they are.
var datasetFields = []string{"id", "name", "title", "author", "author_email", "maintainer", "maintainer_email",
	"license_id", "notes", "url", "version", "type", "private", "owner_org", "extras"}

// resourceFields are the resource fields copied as they are.
var resourceFields = []string{"id", "name", "description", "format", "url", "hash", "mimetype", "mimetype_inner",
	"size", "resource_type", "created", "last_modified", "cache_url"}

// fileJob is an uploaded file to copy after its dataset is written.
type fileJob struct {
	resourceID, url, hash, name string
}

// copyDataset writes one dataset to the target: package_create with its id
// when the target lacks it, else package_update. Uploaded files the target
// already holds (same SHA-256) are kept; others become links to the source
// and, with WithFiles, are copied next.
func (im *importer) copyDataset(ctx context.Context, pkg map[string]any) (Outcome, error) {
	id := pkg["id"].(string)
	var have map[string]any
	err := im.dst.call(ctx, "package_show", map[string]any{"id": id}, &have)
	exists := err == nil
	if err != nil && !notFound(err) {
		return Failed, err
	}
	payload := map[string]any{"state": "active"}
	for _, k := range datasetFields {
		if v, ok := pkg[k]; ok && v != nil {
			payload[k] = v
		}
	}
	var tags []any
	for _, t := range asList(pkg["tags"]) {
		tm, ok := t.(map[string]any)
		if !ok {
			continue
		}
		vid, _ := tm["vocabulary_id"].(string)
		switch {
		case vid == "":
			tags = append(tags, map[string]any{"name": tm["name"]})
		case im.vocabs[vid] != "":
			tags = append(tags, map[string]any{"name": tm["name"], "vocabulary_id": im.vocabs[vid]})
		}
	}
	payload["tags"] = orEmpty(tags)
	if !im.noGroups {
		var groups []any
		for _, g := range asList(pkg["groups"]) {
			if gm, ok := g.(map[string]any); ok {
				groups = append(groups, map[string]any{"name": gm["name"]})
			}
		}
		payload["groups"] = orEmpty(groups)
	}
	held := map[string]map[string]any{}
	for _, r := range asList(have["resources"]) {
		if rm, ok := r.(map[string]any); ok {
			rid, _ := rm["id"].(string)
			held[rid] = rm
		}
	}
	var resources []any
	var jobs []fileJob
	for _, r := range asList(pkg["resources"]) {
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		out := map[string]any{}
		for _, k := range resourceFields {
			if v, ok := rm[k]; ok && v != nil {
				out[k] = v
			}
		}
		if rm["url_type"] == "upload" {
			rid, _ := rm["id"].(string)
			hash, _ := rm["hash"].(string)
			delete(out, "size") // set by the target from the file
			if old := held[rid]; old != nil && old["url_type"] == "upload" && hash != "" && old["hash"] == hash {
				out["url_type"] = "upload" // the target keeps its copy
				delete(out, "url")
			} else {
				out["url_type"] = ""
				if im.o.WithFiles {
					u, _ := rm["url"].(string)
					jobs = append(jobs, fileJob{resourceID: rid, url: u, hash: hash, name: fileName(u)})
				}
			}
		}
		resources = append(resources, out)
	}
	payload["resources"] = orEmpty(resources)
	action, outcome := "package_create", Created
	if exists {
		action, outcome = "package_update", Updated
	}
	if err := im.dst.call(ctx, action, payload, nil); err != nil {
		return Failed, err
	}
	for _, j := range jobs {
		if err := im.copyFile(ctx, j); err != nil {
			return Failed, fmt.Errorf("file of resource %s: %w", j.resourceID, err)
		}
	}
	return outcome, nil
}

// copyFile downloads a resource's file from the source into a temporary
// file, checks its SHA-256 against the source's hash, and uploads it to the
// target's resource (resource_patch with the file).
func (im *importer) copyFile(ctx context.Context, j fileJob) error {
	if j.url == "" {
		return errors.New("the source names no URL for the file")
	}
	f, err := os.CreateTemp(im.tmpDir, "file-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	n, err := im.src.download(ctx, j.url, io.MultiWriter(f, h))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if strings.HasPrefix(j.hash, "sha256:") && !strings.EqualFold(j.hash, sum) {
		return fmt.Errorf("downloaded %d bytes with %s, the source says %s", n, sum, j.hash)
	}
	var res map[string]any
	if err := im.dst.upload(ctx, "resource_patch", map[string]string{"id": j.resourceID}, j.name, f.Name(), &res); err != nil {
		return err
	}
	if got, _ := res["hash"].(string); got != "" && got != sum {
		return fmt.Errorf("the target stored %s, sent %s", got, sum)
	}
	im.stats.Files++
	im.stats.FileBytes += n
	return nil
}

func fileName(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "file"
	}
	name := path.Base(p.Path)
	if name == "" || name == "." || name == "/" || name == "download" {
		return "file"
	}
	return name
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}
