package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/filestore"
	"toxgate/gateway/catalogclient"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/plugins/contract"
)

// Models runs model calls (the gateway's module host).
type Models interface {
	Resolve(nameOrPath string) (modelapi.ModelRef, bool)
	Invoke(ctx context.Context, path, caller string, body []byte) ([]byte, modelapi.ModelRef, error)
}

// Config tunes the jobs of one gateway. Zero values take the defaults noted.
type Config struct {
	// Workers is the number of chunks this gateway scores at once (default 2).
	Workers int
	// ChunkRows is the number of rows of a chunk, the unit of work and of
	// leasing (default 1000).
	ChunkRows int
	// CallRows is the number of rows of one model call on a batch route
	// (default 100); a row the model refuses costs a retry of its call.
	CallRows int
	// Lease is how long a chunk stays with a gateway that stopped renewing
	// it (default 30s); leases are renewed every third of it.
	Lease time.Duration
	// Poll is how often a gateway looks for work (default 1s).
	Poll time.Duration
	// MaxRows caps a job's input rows (default 1,000,000).
	MaxRows int
	// MaxResultBytes caps the result file (default 1 GiB).
	MaxResultBytes int64
	// MaxPerUser caps the jobs one user may have queued or running at
	// once, across the gateways of the store (default 4); 429 beyond.
	MaxPerUser int
	// SiteURL is the gateway's public URL, for the catalog's answers.
	SiteURL string
	// VersionInput makes every job record the dataset version of its
	// input, made when the input's file changed since the dataset's last
	// version (jobs.version_input).
	VersionInput bool
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.ChunkRows <= 0 {
		c.ChunkRows = 1000
	}
	if c.CallRows <= 0 {
		c.CallRows = 100
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.MaxRows <= 0 {
		c.MaxRows = 1_000_000
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 1 << 30
	}
	if c.MaxPerUser <= 0 {
		c.MaxPerUser = 4
	}
	return c
}

// maxAttempts is how many leases a chunk may take before the job fails.
const maxAttempts = 5

// Request is the body of POST /jobs.
type Request struct {
	// Model is a model name ("herg") or a route ("/hERG/evaluate").
	Model string `json:"model"`
	// ResourceID is the catalog resource whose uploaded table is scored.
	ResourceID string `json:"resource_id"`
	// SMILESColumn names the column holding the structures of a batch
	// (SMILES) model; default: the route's list member ("smiles").
	SMILESColumn string `json:"smiles_column"`
	// PackageID is the dataset the result resource is added to.
	PackageID string `json:"package_id"`
	// InputVersion scores the input as of this version of its dataset
	// (an id or a name); empty: as it is now.
	InputVersion string `json:"input_version,omitempty"`
	// rerunOf is the job a rerun repeats (set by Rerun only).
	rerunOf string
}

// Error is a refused request: HTTP status, code, message, field; the
// gateway's one error shape of its JSON APIs (modelapi.CallError).
type Error = modelapi.CallError

func errorf(status int, code, field, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Service creates, runs and reports jobs. Create it with New, then Start.
type Service struct {
	db      db
	models  Models
	catalog *catalogclient.Client
	files   *filestore.Store
	cfg     Config
	log     *slog.Logger
	owner   string // this process, in the leases it takes

	// slotMu runs this gateway's takings of users' places one at a time.
	slotMu sync.Mutex

	mu      sync.Mutex
	active  []Job
	cursors map[string]*cursor
	wake    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// cursor is this gateway's pass over a job's chunks.
type cursor struct {
	next     int
	passDone int
	rescanAt time.Time
}

// New returns a Service on the store database d.
func New(d *mongo.Database, models Models, catalog *catalogclient.Client, files *filestore.Store, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db{d}, models: models, catalog: catalog, files: files, cfg: cfg.withDefaults(),
		log: log, owner: newID(), cursors: map[string]*cursor{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// catalogCall runs a catalog action as c and returns its result, or the
// catalog's refusal as an *Error with the catalog's status and message.
func (s *Service) catalogCall(ctx context.Context, action string, c contract.Identity, body any, upload *contract.Upload) (map[string]any, error) {
	var res map[string]any
	err := s.catalog.Attach(ctx, c, action, body, upload, &res)
	var ce *catalogclient.Error
	if !errors.As(err, &ce) {
		return res, err
	}
	code := "catalog_error"
	switch ce.Status {
	case http.StatusForbidden:
		code = "forbidden"
	case http.StatusNotFound:
		code = "not_found"
	case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		code = "unavailable"
	}
	return nil, &Error{Status: ce.Status, Code: code, Message: action + ": " + ce.Error()}
}

// Create checks a request, stages the input rows in the store and queues
// the job; once it returns the job is never lost.
func (s *Service) Create(ctx context.Context, c contract.Identity, req Request) (*Status, error) {
	switch {
	case req.Model == "":
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "model", "name a model (\"herg\") or a model route (\"/hERG/evaluate\")")
	case req.ResourceID == "":
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "resource_id", "name the resource whose table is scored")
	case req.PackageID == "":
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "package_id", "name the dataset the result resource is added to")
	}
	ref, ok := s.models.Resolve(req.Model)
	if !ok {
		return nil, errorf(http.StatusNotFound, "not_found", "model", "no model or model route named %q", req.Model)
	}
	m, err := newMapping(ref, req.SMILESColumn)
	if err != nil {
		return nil, err
	}
	id := c
	pkg, err := s.catalogCall(ctx, "package_writable", id, map[string]any{"id": req.PackageID}, nil)
	if err != nil {
		return nil, fieldOf(err, "package_id")
	}
	fileArgs := map[string]any{"id": req.ResourceID}
	if req.InputVersion != "" {
		fileArgs["version"] = req.InputVersion
	}
	file, err := s.catalogCall(ctx, "resource_file", id, fileArgs, nil)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusNotFound && strings.Contains(e.Message, "no uploaded file") {
			e.Status, e.Code = http.StatusUnprocessableEntity, "invalid_input"
			e.Message = "resource " + req.ResourceID + " has no uploaded file to score (jobs read uploaded CSV or TSV tables)"
		}
		return nil, fieldOf(err, "resource_id")
	}
	fileID, _ := file["file_id"].(string)
	verID, _ := file["version_id"].(string)
	verName, _ := file["version_name"].(string)
	if req.InputVersion == "" && s.cfg.VersionInput {
		v, err := s.catalogCall(ctx, "dataset_version_for_input", id, map[string]any{"id": req.ResourceID}, nil)
		if err != nil {
			return nil, fieldOf(err, "resource_id")
		}
		verID, _ = v["id"].(string)
		verName, _ = v["name"].(string)
		if vf, err := s.catalogCall(ctx, "resource_file", id, map[string]any{"id": req.ResourceID, "version": verID}, nil); err == nil {
			fileID, _ = vf["file_id"].(string) // the version's file: the one scored
		}
	}
	info, err := s.files.Stat(ctx, fileID)
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "reading the resource's file: %v", err)
	}
	rd, err := s.files.Open(ctx, info, 0, info.Size)
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "reading the resource's file: %v", err)
	}
	defer rd.Close()
	j := &Job{ID: newID(), UserID: c.UserID, User: c.Name, Sysadmin: c.Sysadmin,
		Model: ref.Model, Version: ref.Version, ModuleSHA256: ref.ModuleSHA256, Route: ref.Route,
		ResourceID: req.ResourceID, PackageID: pkg["package_id"].(string), InputFileID: info.ID,
		InputFilename: info.Filename, InputSHA256: info.SHA256, Column: m.column,
		InputVersion: verID, InputVersionName: verName, RerunOf: req.rerunOf,
		ChunkRows: s.cfg.ChunkRows, State: StateQueued, Created: time.Now().UTC()}
	if j.Slot, err = s.takeSlot(ctx, c, j.ID); err != nil {
		return nil, err
	}
	staged := false
	defer func() {
		if !staged {
			_ = s.db.rows(j.ID).Drop(context.WithoutCancel(ctx))
			s.releaseSlot(context.WithoutCancel(ctx), j)
		}
	}()
	var buf []string
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if _, err := insert(ctx, s.db.rows(j.ID), inRows{ID: inID(j.Chunks), Rows: buf}); err != nil {
			return err
		}
		j.Chunks++
		buf = nil
		return nil
	}
	header, err := readTable(io.Reader(rd), info.Filename, s.cfg.MaxRows, func(rec []string) error {
		b, _ := json.Marshal(rec)
		buf = append(buf, string(b))
		j.Total++
		if len(buf) == s.cfg.ChunkRows {
			return flush()
		}
		return nil
	})
	if errors.Is(err, ErrInput) {
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "resource_id", "resource %s: %v", req.ResourceID, err)
	}
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "staging the input: %v", err)
	}
	if err := m.check(header); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "staging the input: %v", err)
	}
	if j.Total == 0 {
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "resource_id", "resource %s: the table has a header and no rows", req.ResourceID)
	}
	j.Columns = header
	if _, err := insert(ctx, s.db.jobs(), j); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "recording the job: %v", err)
	}
	staged = true
	s.log.Info("job queued", "job", j.ID, "user", c.Name, "model", j.Model, "version", j.Version, "rows", j.Total, "resource", j.ResourceID)
	s.mu.Lock()
	s.active = append(s.active, *j)
	s.mu.Unlock()
	// The answer is the job as accepted (queued), read before the workers
	// are woken: a worker may take its first chunk at once.
	st, err := s.status(ctx, j)
	s.poke()
	return st, err
}

// fieldOf names the request field a catalog refusal is about.
func fieldOf(err error, field string) error {
	if e, ok := err.(*Error); ok && e.Status < 500 {
		e.Field = field
	}
	return err
}

func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Status is what GET /jobs/{id} answers.
type Status struct {
	ID               string `json:"id"`
	State            string `json:"state"`
	StatusURL        string `json:"status_url"`
	Model            string `json:"model"`
	Version          string `json:"version"`
	ModuleSHA256     string `json:"module_sha256"`
	Route            string `json:"route"`
	ResourceID       string `json:"resource_id"`
	InputSHA256      string `json:"input_sha256"`
	InputVersion     string `json:"input_version,omitempty"`
	InputVersionName string `json:"input_version_name,omitempty"`
	RerunOf          string `json:"rerun_of,omitempty"`
	// Differences are a rerun's changed predictions against the job it
	// repeats, once it succeeded (rerun.go).
	Differences      *Differences `json:"differences,omitempty"`
	Column           string       `json:"column,omitempty"`
	PackageID        string       `json:"package_id"`
	User             string       `json:"user"`
	Total            int          `json:"total"`
	Done             int          `json:"done"`
	FailedRows       int          `json:"failed_rows"`
	RowsPerSecond    float64      `json:"rows_per_second"`
	ETASeconds       *float64     `json:"eta_seconds,omitempty"`
	ResultResourceID string       `json:"result_resource_id,omitempty"`
	Error            string       `json:"error,omitempty"`
	Created          time.Time    `json:"created"`
	Started          *time.Time   `json:"started,omitempty"`
	Finished         *time.Time   `json:"finished,omitempty"`
}

func (s *Service) status(ctx context.Context, j *Job) (*Status, error) {
	st := &Status{ID: j.ID, State: j.State, StatusURL: "/jobs/" + j.ID, Model: j.Model, Version: j.Version,
		ModuleSHA256: j.ModuleSHA256, Route: j.Route, ResourceID: j.ResourceID, InputSHA256: j.InputSHA256,
		Column: j.Column, PackageID: j.PackageID, User: j.User, Total: j.Total, Done: j.Done, FailedRows: j.Failed,
		ResultResourceID: j.ResultResourceID, Error: j.Error, Created: j.Created,
		InputVersion: j.InputVersion, InputVersionName: j.InputVersionName, RerunOf: j.RerunOf, Differences: j.Differences}
	ls, err := s.db.allLeases(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var started, last time.Time
	if !Terminal(j.State) {
		done := map[string]bool{}
		for _, l := range ls {
			chunk, _, isChunk := strings.Cut(l.ID, "/")
			switch {
			case l.ID == cancelID:
				st.State = StateCancelled
			case !strings.HasPrefix(l.ID, "c") || !isChunk:
			case l.Done && !done[chunk]:
				done[chunk] = true
				st.Done += l.Rows
				st.FailedRows += l.Failed
			case !l.Done && l.Until.After(now) && st.State == StateQueued:
				st.State = StateRunning
			}
		}
	}
	for _, l := range ls {
		if strings.HasPrefix(l.ID, "c") {
			if started.IsZero() || l.Since.Before(started) {
				started = l.Since
			}
			if l.Done && l.Until.After(last) {
				last = l.Until
			}
		}
	}
	if !started.IsZero() {
		st.Started = &started
		end := now
		if Terminal(j.State) && !j.Finished.IsZero() {
			end = j.Finished
		}
		if secs := end.Sub(started).Seconds(); secs > 0 {
			st.RowsPerSecond = float64(st.Done) / secs
		}
		if !Terminal(st.State) && st.RowsPerSecond > 0 {
			eta := float64(st.Total-st.Done) / st.RowsPerSecond
			st.ETASeconds = &eta
		}
	}
	if !j.Finished.IsZero() {
		f := j.Finished
		st.Finished = &f
	}
	return st, nil
}

// Get reports job id to c (its owner or a sysadmin).
func (s *Service) Get(ctx context.Context, c contract.Identity, id string) (*Status, error) {
	j, err := s.visible(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := s.differences(ctx, c, j); err != nil {
		s.log.Warn("rerun differences not computed", "job", j.ID, "err", err)
	}
	return s.status(ctx, j)
}

func (s *Service) visible(ctx context.Context, c contract.Identity, id string) (*Job, error) {
	j, err := s.db.job(ctx, id)
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "%v", err)
	}
	if j == nil || !c.Sysadmin && j.UserID != c.UserID {
		return nil, errorf(http.StatusNotFound, "not_found", "", "no job %q of yours", id)
	}
	return j, nil
}

// List reports c's jobs, newest first (at most 100).
func (s *Service) List(ctx context.Context, c contract.Identity) ([]*Status, error) {
	js, err := s.db.byUser(ctx, c.UserID, 100)
	if err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "%v", err)
	}
	out := make([]*Status, 0, len(js))
	for i := range js {
		st, err := s.status(ctx, &js[i])
		if err != nil {
			return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "%v", err)
		}
		out = append(out, st)
	}
	return out, nil
}

// Cancel stops job id of c: the work in flight stops, no result is
// written. A job already over answers 409 with its state.
func (s *Service) Cancel(ctx context.Context, c contract.Identity, id string) (*Status, error) {
	j, err := s.visible(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if Terminal(j.State) {
		return nil, errorf(http.StatusConflict, "conflict", "", "job %s is already %s", id, j.State)
	}
	if _, err := insert(ctx, s.db.leases(id), lease{ID: cancelID, Owner: s.owner, Since: time.Now(), Reason: "cancelled by " + c.Name}); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "%v", err)
	}
	if err := s.finish(ctx, j, StateCancelled, "cancelled by "+c.Name); err != nil {
		s.log.Warn("cancelled job not yet marked; a worker will", "job", id, "err", err)
	}
	if j, err = s.db.job(ctx, id); err != nil || j == nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "", "re-reading job %s: %v", id, err)
	}
	if j.State == StateSucceeded || j.State == StateFailed {
		return nil, errorf(http.StatusConflict, "conflict", "", "job %s finished (%s) before it could be cancelled", id, j.State)
	}
	return s.status(ctx, j)
}

// cancelled reports whether job id has a cancel request.
func (s *Service) cancelled(ctx context.Context, id string) bool {
	l, err := s.db.lease(ctx, id, cancelID)
	return err == nil && l != nil
}
