// Package modelcat publishes every loaded model as a dataset of the catalog:
// its card as the description, its module's SHA-256, version and validation
// figures as extras, the data it learned from as uploaded resources, and a
// link to its page /models/{name}. See README.md.
package modelcat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"toxgate/catalog/filestore"
	"toxgate/gateway/catalogclient"
	"toxgate/gateway/modulehost"
	"toxgate/plugins/contract"
	"toxgate/sdk/abi"
)

// Models lists the loaded modules (the gateway's module host).
type Models interface {
	Models() []modulehost.ModelInfo
	Manifests() (generation uint64, manifests []abi.Manifest)
}

// Config tunes the publisher.
type Config struct {
	// Org is the organization holding the models' datasets (default "toxgate-models").
	Org string
	// DataDir is the source tree's modules/ folder: model cards, internal/data and
	// the modules' data files (default "./modules").
	DataDir string
	// SiteURL is the gateway's public URL: the catalog's answers and the
	// models' page links ("" gives links relative to the gateway).
	SiteURL string
	// MaxFileBytes caps one uploaded file (default 1 GiB).
	MaxFileBytes int64
	// Poll is how often the module set is checked for changes (default 1s).
	Poll time.Duration
	// Registerer takes the publisher's metrics (nil: not registered).
	Registerer prometheus.Registerer
}

// Identity is the caller the publisher acts as: the gateway's own sysadmin.
var Identity = contract.Identity{Name: "toxgate", Sysadmin: true}

// Publisher keeps one dataset per loaded model in the catalog.
type Publisher struct {
	models  Models
	catalog *catalogclient.Client
	files   *filestore.Store
	cfg     Config
	log     *slog.Logger
	clashes *prometheus.GaugeVec

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns a publisher; Start runs it.
func New(models Models, catalog *catalogclient.Client, files *filestore.Store, cfg Config, log *slog.Logger) *Publisher {
	if cfg.Org == "" {
		cfg.Org = "toxgate-models"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "./modules"
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 1 << 30
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	p := &Publisher{models: models, catalog: catalog, files: files, cfg: cfg, log: log,
		clashes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toxgate_modelcat_clashes",
			Help: "Models left unpublished by the last pass because another party holds their place: kind=dataset, a model-<name> dataset outside the models organization; kind=org, a models organization with admins or editors who are not sysadmins."},
			[]string{"kind"}),
		stop: make(chan struct{}), done: make(chan struct{})}
	p.clashes.WithLabelValues(clashDataset).Set(0)
	p.clashes.WithLabelValues(clashOrg).Set(0)
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(p.clashes)
	}
	return p
}

// Start publishes now and again whenever the set of modules changes; a
// failed pass (the catalog not up yet, say) is retried with a growing delay.
func (p *Publisher) Start() {
	go p.run()
}

// Close stops the publisher, waiting for a pass in progress (until ctx ends).
func (p *Publisher) Close(ctx context.Context) error {
	p.once.Do(func() { close(p.stop) })
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Publisher) run() {
	defer close(p.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	var published uint64
	first, retry := true, time.Duration(0)
	lastErr := ""
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	for {
		gen, _ := p.models.Manifests()
		if first || gen != published || retry > 0 {
			if err := p.PublishAll(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				// The same failure again waits twice as long; another one
				// (a pass that got further) is retried soon.
				if err.Error() != lastErr {
					retry = 0
				}
				lastErr = err.Error()
				retry = min(max(2*retry, p.cfg.Poll), time.Minute)
				p.log.Warn("publishing the models in the catalog failed; retrying", "err", err, "in", retry.String())
				select {
				case <-time.After(retry):
				case <-p.stop:
					return
				}
				continue
			}
			first, retry, published, lastErr = false, 0, gen, ""
		}
		select {
		case <-t.C:
		case <-p.stop:
			return
		}
	}
}

// PublishAll brings every loaded model's dataset up to date.
func (p *Publisher) PublishAll(ctx context.Context) error {
	var ready []modulehost.ModelInfo
	for _, m := range p.models.Models() {
		if m.Status == "ready" && m.SHA256 != "" {
			ready = append(ready, m)
		}
	}
	if len(ready) == 0 {
		return nil
	}
	if _, err := os.Stat(p.cfg.DataDir); err != nil {
		p.log.Warn("models_data_dir not found: the models' datasets get their cards and links but no data files", "dir", p.cfg.DataDir, "err", err)
	}
	orgID, err := p.ensureOrg()
	if err != nil {
		return err
	}
	var errs []error
	var st passStats
	clashes := 0
	for _, m := range ready {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.publish(ctx, m, orgID, &st); err != nil {
			if errors.As(err, new(*ClashError)) {
				clashes++
			}
			errs = append(errs, fmt.Errorf("model %s: %w", m.Name, err))
		}
	}
	p.clashes.WithLabelValues(clashDataset).Set(float64(clashes))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.log.Info("models in the catalog are up to date", "org", p.cfg.Org, "models", len(ready), "updated", st.updated, "uploaded_files", st.uploaded)
	return nil
}

// passStats counts what one pass wrote.
type passStats struct{ updated, uploaded int }

// statusOf is the status of a catalog refusal (0 for other errors).
func statusOf(err error) int {
	var ce *catalogclient.Error
	if errors.As(err, &ce) {
		return ce.Status
	}
	return 0
}

// call runs a catalog action as the gateway's sysadmin (Identity).
func (p *Publisher) call(action string, body any, up *contract.Upload) (map[string]any, error) {
	var res map[string]any
	if err := p.catalog.At(p.cfg.SiteURL).Attach(context.Background(), Identity, action, body, up, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	return res, nil
}

// ensureOrg makes the models' organization when it is missing and returns
// its id. An organization of that name with an admin or editor who is not a
// sysadmin (a user who made it first) is not the gateway's: nothing is
// published into it (a *ClashError).
func (p *Publisher) ensureOrg() (string, error) {
	show := func() (map[string]any, error) {
		return p.call("organization_show", map[string]any{"id": p.cfg.Org, "include_users": true, "include_datasets": false}, nil)
	}
	org, err := show()
	if statusOf(err) == http.StatusNotFound {
		_, err = p.call("organization_create", map[string]any{"name": p.cfg.Org, "title": "toxgate models",
			"description": "One dataset per model served by this toxgate: its card, validation figures, module SHA-256 and the data it learned from. Kept by the gateway."}, nil)
		if err != nil && statusOf(err) != http.StatusConflict { // a conflict: another gateway made it first
			return "", err
		}
		org, err = show()
	}
	if err != nil {
		return "", err
	}
	if held := untrustedMembers(org); len(held) > 0 {
		p.clashes.WithLabelValues(clashOrg).Set(1)
		p.log.Error("the models organization has admins or editors who are not sysadmins: nothing is published into it (remove them, or set catalog.models_org to an organization only sysadmins hold)",
			"org", p.cfg.Org, "users", strings.Join(held, ","))
		return "", &ClashError{Kind: clashOrg, Org: p.cfg.Org, Holders: held}
	}
	p.clashes.WithLabelValues(clashOrg).Set(0)
	id, _ := org["id"].(string)
	if id == "" {
		return "", fmt.Errorf("organization_show %s: no id in the answer", p.cfg.Org)
	}
	return id, nil
}

// untrustedMembers are the names of the users of organization_show's answer
// who may write its datasets (admin or editor) without being sysadmins.
func untrustedMembers(org map[string]any) []string {
	users, _ := org["users"].([]any)
	var out []string
	for _, u := range users {
		um, _ := u.(map[string]any)
		capacity, _ := um["capacity"].(string)
		sysadmin, _ := um["sysadmin"].(bool)
		if (capacity == "admin" || capacity == "editor") && !sysadmin {
			name, _ := um["name"].(string)
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Kinds of clash (the label of toxgate_modelcat_clashes).
const (
	clashDataset = "dataset"
	clashOrg     = "org"
)

// ClashError is a model's place in the catalog held by someone else: its
// dataset name by a dataset outside the models' organization (Kind
// "dataset"), or the organization by users who are not sysadmins (Kind
// "org"). Nothing of such a dataset or organization is trusted or changed.
type ClashError struct {
	Kind    string
	Dataset string   // the dataset's name (Kind "dataset")
	Org     string   // the organization holding it (name, else id)
	Holders []string // the organization's admins and editors who are not sysadmins (Kind "org")
}

func (e *ClashError) Error() string {
	if e.Kind == clashOrg {
		return fmt.Sprintf("organization %s has admins or editors who are not sysadmins (%s)", e.Org, strings.Join(e.Holders, ", "))
	}
	return fmt.Sprintf("dataset %s belongs to organization %s, not to the models' organization", e.Dataset, e.Org)
}

// orgOf names the organization of a dataset dict.
func orgOf(ds map[string]any) string {
	if o, ok := ds["organization"].(map[string]any); ok {
		if n, _ := o["name"].(string); n != "" {
			return n
		}
	}
	if id, _ := ds["owner_org"].(string); id != "" {
		return id
	}
	return "(none)"
}

var badName = regexp.MustCompile(`[^a-z0-9_-]+`)

// DatasetPrefix starts the name of every model's dataset; the catalog
// reserves it for sysadmins (catalog.ReservedDatasetPrefix).
const DatasetPrefix = "model-"

// DatasetName is the name of model name's dataset ("model-herg").
func DatasetName(model string) string {
	return DatasetPrefix + badName.ReplaceAllString(strings.ToLower(model), "-")
}

// stableID is a UUID derived from key, so that every gateway picks the same
// id for the same resource and a second creation is refused as a conflict.
func stableID(key string) string {
	s := sha256.Sum256([]byte("toxgate-models:" + key))
	s[6] = s[6]&0x0f | 0x50
	s[8] = s[8]&0x3f | 0x80
	h := hex.EncodeToString(s[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// publish creates or updates model m's dataset in the organization orgID;
// nothing is written when the dataset already records m's module SHA-256.
// A dataset of that name in another organization is neither trusted nor
// changed (a *ClashError, logged).
func (p *Publisher) publish(ctx context.Context, m modulehost.ModelInfo, orgID string, st *passStats) error {
	name := DatasetName(m.Name)
	ds, err := p.call("package_show", map[string]any{"id": name}, nil)
	if statusOf(err) == http.StatusNotFound {
		ds, err = p.call("package_create", map[string]any{"name": name, "title": titleOf(m), "owner_org": orgID,
			"notes": p.notes(m), "extras": []any{}}, nil)
		if statusOf(err) == http.StatusConflict { // another gateway made it first
			ds, err = p.call("package_show", map[string]any{"id": name}, nil)
		}
	}
	if err != nil {
		return err
	}
	if owner, _ := ds["owner_org"].(string); owner != orgID {
		id, _ := ds["id"].(string)
		p.log.Error("a dataset outside the models organization holds the model's dataset name: the model is not published and nothing of that dataset is trusted (rename or delete it)",
			"model", m.Name, "dataset", name, "dataset_id", id, "dataset_org", orgOf(ds), "models_org", p.cfg.Org)
		return &ClashError{Kind: clashDataset, Dataset: name, Org: orgOf(ds)}
	}
	if extra(ds, "module_sha256") == m.SHA256 {
		return nil
	}
	p.log.Info("publishing model in the catalog", "model", m.Name, "dataset", name, "sha256", m.SHA256)
	st.updated++
	have := map[string]map[string]any{}
	if rs, ok := ds["resources"].([]any); ok {
		for _, r := range rs {
			if rm, ok := r.(map[string]any); ok {
				id, _ := rm["id"].(string)
				have[id] = rm
			}
		}
	}
	dsID, _ := ds["id"].(string)
	want := map[string]bool{}
	for _, f := range filesOf(p.cfg.DataDir, m.Name) {
		id := stableID(m.Name + "/" + f.Rel)
		want[id] = true
		uploaded, err := p.putFile(ctx, dsID, id, have[id], f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Rel, err)
		}
		if uploaded {
			st.uploaded++
		}
	}
	link := stableID(m.Name + "/page")
	want[link] = true
	lb := map[string]any{"id": link, "package_id": dsID, "name": "Model page /models/" + m.Name,
		"url": strings.TrimRight(p.cfg.SiteURL, "/") + "/models/" + m.Name, "format": "JSON",
		"description": "The model's entry in the gateway's model index: routes, input schemas, limits, card."}
	if r := have[link]; r == nil {
		if _, err := p.call("resource_create", lb, nil); err != nil && statusOf(err) != http.StatusConflict {
			return err
		}
	} else if r["url"] != lb["url"] {
		if _, err := p.call("resource_update", lb, nil); err != nil {
			return err
		}
	}
	// Without the data directory (a gateway installed without the source
	// tree) the files another gateway published are left as they are.
	_, dirErr := os.Stat(p.cfg.DataDir)
	for id := range have {
		if !want[id] && dirErr == nil {
			if _, err := p.call("resource_delete", map[string]any{"id": id}, nil); err != nil && statusOf(err) != http.StatusNotFound {
				return err
			}
		}
	}
	// The module's SHA-256 goes in last: a pass cut short is redone.
	_, err = p.call("package_patch", map[string]any{"id": dsID, "title": titleOf(m), "notes": p.notes(m), "extras": extras(m)}, nil)
	return err
}

// putFile uploads f as resource id of dataset dsID unless r (its current
// state, nil when absent) already holds the same bytes.
func (p *Publisher) putFile(ctx context.Context, dsID, id string, r map[string]any, f dataFile) (uploaded bool, err error) {
	sum, err := hashFile(f.Path)
	if err != nil {
		return false, err
	}
	body := map[string]any{"id": id, "package_id": dsID, "name": f.Name, "format": f.Format,
		"description": f.Description, "url_type": "upload", "data_kind": f.Kind, "shipped_as": "modules/" + f.Rel}
	if f.Source != "" {
		body["source"] = strings.TrimSpace(f.Source)
	}
	if f.Licence != "" {
		body["licence"] = f.Licence
	}
	if r != nil && r["hash"] == "sha256:"+sum {
		return false, nil
	}
	in, err := os.Open(f.Path)
	if err != nil {
		return false, err
	}
	defer in.Close()
	w, err := p.files.Create(ctx, filepath.Base(f.Path), p.cfg.MaxFileBytes)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(w, in); err != nil {
		_ = w.Abort(context.WithoutCancel(ctx))
		return false, err
	}
	info, err := w.Commit()
	if err != nil {
		return false, err
	}
	up := &contract.Upload{FileID: info.ID, Filename: info.Filename, Mimetype: mimeOf(f), Size: info.Size, SHA256: info.SHA256}
	action := "resource_update"
	if r == nil {
		action = "resource_create"
	}
	if _, err := p.call(action, body, up); err != nil {
		_ = p.files.Delete(context.WithoutCancel(ctx), info.ID)
		if statusOf(err) == http.StatusConflict && r == nil { // another gateway added it first
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func mimeOf(f dataFile) string {
	switch {
	case strings.HasSuffix(f.Name, ".gz"):
		return "application/gzip"
	case f.Format == "CSV":
		return "text/csv"
	case f.Format == "TSV":
		return "text/tab-separated-values"
	case f.Format == "Markdown":
		return "text/markdown"
	}
	return "text/plain"
}

func titleOf(m modulehost.ModelInfo) string {
	t := m.Title
	if t == "" {
		t = m.Name
	}
	return "Model: " + t
}

// notes is the model card: MODEL_CARD.md of the module's source folder when
// there is one, else the card the module declares (as GET /models/{name}).
func (p *Publisher) notes(m modulehost.ModelInfo) string {
	if b, err := os.ReadFile(filepath.Join(p.cfg.DataDir, m.Name, "MODEL_CARD.md")); err == nil {
		return string(b)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n\n", titleOf(m))
	if m.Description != "" {
		sb.WriteString(m.Description + "\n\n")
	}
	if c := m.Card; c != nil {
		for _, s := range []struct{ k, v string }{{"Summary", c.Summary}, {"Intended use", c.IntendedUse}, {"Data", c.Data},
			{"Method", c.Method}, {"Validation", c.Validation}, {"Limitations", c.Limitations}, {"License", c.License}} {
			if s.v != "" {
				fmt.Fprintf(&sb, "**%s.** %s\n\n", s.k, s.v)
			}
		}
		if len(c.Units) > 0 {
			keys := make([]string, 0, len(c.Units))
			for k := range c.Units {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			sb.WriteString("**Units.**\n\n")
			for _, k := range keys {
				fmt.Fprintf(&sb, "- %s: %s\n", k, c.Units[k])
			}
			sb.WriteString("\n")
		}
		for _, r := range c.References {
			fmt.Fprintf(&sb, "- %s\n", r)
		}
	}
	return sb.String()
}

// extras are the dataset's key-value fields.
func extras(m modulehost.ModelInfo) []any {
	kv := [][2]string{{"model", m.Name}, {"module_version", m.Version}, {"module_sha256", m.SHA256},
		{"model_page", "/models/" + m.Name}}
	var routes []string
	for _, r := range m.Routes {
		routes = append(routes, r.Path)
	}
	kv = append(kv, [2]string{"routes", strings.Join(routes, " ")})
	if c := m.Card; c != nil {
		kv = append(kv, [2]string{"validation", c.Validation}, [2]string{"model_license", c.License})
	}
	out := make([]any, 0, len(kv))
	for _, e := range kv {
		if e[1] != "" {
			out = append(out, map[string]any{"key": e[0], "value": e[1]})
		}
	}
	return out
}

// extra is the value of extras key k of dataset ds.
func extra(ds map[string]any, k string) string {
	es, _ := ds["extras"].([]any)
	for _, e := range es {
		if em, ok := e.(map[string]any); ok && em["key"] == k {
			v, _ := em["value"].(string)
			return v
		}
	}
	return ""
}
