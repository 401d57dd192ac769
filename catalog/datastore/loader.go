package datastore

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"toxgate/catalog/ckan"
	"toxgate/internal/egress"
)

// Job is what the loader needs to know about a resource to load it.
type Job struct {
	// ResourceID is the resource (and table) id.
	ResourceID string `json:"resource_id"`
	// URL is the resource's URL (fetched over HTTP unless an upload).
	URL string `json:"url"`
	// URLType is "upload" for files in the FileStore.
	URLType string `json:"url_type,omitempty"`
	// Format is the resource's format (CSV, TSV), a hint for the delimiter.
	Format string `json:"format,omitempty"`
	// FileID is the uploaded file's id in the FileStore (uploads only).
	FileID string `json:"file_id,omitempty"`
	// Submitter is the user whose write queued the load: loads take turns
	// by submitter, and each has its own queue cap.
	Submitter string `json:"submitter,omitempty"`
	// Uncapped exempts the load from LoaderConfig.QueuePerUser (a
	// sysadmin's, or the gateway's own); it still takes turns.
	Uncapped bool `json:"uncapped,omitempty"`
}

// Opener opens a job's file.
type Opener func(ctx context.Context, job Job) (io.ReadCloser, error)

// LoaderConfig configures the background loader.
type LoaderConfig struct {
	// OpenUpload opens an uploaded file (url_type "upload"); nil means
	// uploads cannot be loaded (the job fails with a clear error).
	OpenUpload Opener
	// Egress is the policy linked files are fetched under (nil: the
	// default policy, which reaches no internal address).
	Egress *egress.Policy
	// MaxBytes bounds the size of a file to load (0: 1 GiB).
	MaxBytes int64
	// Workers is how many loads run at once (0: 4).
	Workers int
	// WorkersPerUser is how many loads of one submitter run at once (0:
	// half of Workers, at least 1); the others wait while other
	// submitters' loads take turns.
	WorkersPerUser int
	// QueuePerUser is how many loads one submitter may have waiting (0:
	// 20); past it Submit fails with a 429 error and records the load as
	// failed.
	QueuePerUser int
	// FetchTimeout bounds the fetch of a linked file, its last byte
	// included (0: 15 minutes).
	FetchTimeout time.Duration
	// IdleTimeout aborts a fetch whose server sends nothing for this long
	// (0: 30 seconds).
	IdleTimeout time.Duration
	// Lease is how long a load may go without a heartbeat before another
	// worker (in this or another process) takes it over (0: 15s).
	Lease time.Duration
	// Poll is how often idle workers look for jobs (0: 1s).
	Poll time.Duration
	// Loaded is called after a table was (re)loaded, to mark the resource
	// datastore_active.
	Loaded func(ctx context.Context, resourceID string)
}

// Loader runs load jobs in the background. Jobs live in the engine
// (_datastore_jobs), so they survive restarts and are shared by every
// process on the same engine: a job whose worker stopped heart-beating is
// taken over and redone from the start.
type Loader struct {
	s      *Store
	cfg    LoaderConfig
	client *http.Client
	owner  string
	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	turns  turns
}

// maxAttempts is how many times an interrupted load is retried before it
// is marked failed.
const maxLoadAttempts = 3

// StartLoader starts the background workers.
func (s *Store) StartLoader(cfg LoaderConfig) *Loader {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 30
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.WorkersPerUser <= 0 {
		cfg.WorkersPerUser = (cfg.Workers + 1) / 2
	}
	if cfg.QueuePerUser <= 0 {
		cfg.QueuePerUser = 20
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = 15 * time.Minute
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 15 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if err := s.migrateLoadQueue(context.Background()); err != nil {
		s.log.Error("datastore loader: prepare the job table", "err", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	l := &Loader{s: s, cfg: cfg, client: cfg.Egress.Client(0), owner: hex.EncodeToString(b[:]), wake: make(chan struct{}, cfg.Workers), cancel: cancel}
	for i := 0; i < cfg.Workers; i++ {
		l.wg.Add(1)
		go l.work(ctx)
	}
	s.loader = l
	return l
}

func (l *Loader) stop() {
	l.cancel()
	l.wg.Wait()
}

func nowText() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000") }

// Submit queues a (re)load of job.ResourceID; a load already queued or
// running for it is replaced (a running one discards its work). When the
// submitter already has QueuePerUser loads waiting (and the job is not
// Uncapped), the load is recorded as failed and Submit returns a 429
// *ckan.Error.
func (l *Loader) Submit(ctx context.Context, job Job) error {
	waiting, err := l.waiting(ctx, job.Submitter, job.ResourceID)
	if err != nil {
		return err
	}
	state, errText, msg, level := "pending", "", "Load submitted", "INFO"
	if waiting >= l.cfg.QueuePerUser && !job.Uncapped {
		state, level = "error", "ERROR"
		errText = fmt.Sprintf("not loaded: %d loads of this user are already waiting, at most %d (datastore.load_queue_per_user); submit it again with xloader_submit when they are done", waiting, l.cfg.QueuePerUser)
		msg = errText
	}
	src, _ := json.Marshal(job)
	p := l.s.d.ph
	now := nowText()
	logs, _ := json.Marshal([]map[string]any{{"level": level, "message": msg, "timestamp": now}})
	_, err = l.s.rw.ExecContext(ctx, `INSERT INTO `+jobsTable+` (resource_id, state, source, error, rows_loaded, attempts, owner, heartbeat, created, updated, logs, submitter)
		VALUES (`+p(1)+`, `+p(2)+`, `+p(3)+`, `+p(4)+`, 0, 0, '', 0, `+p(5)+`, `+p(6)+`, `+p(7)+`, `+p(8)+`)
		ON CONFLICT (resource_id) DO UPDATE SET state = excluded.state, source = excluded.source, error = excluded.error, rows_loaded = 0, attempts = 0, owner = '', heartbeat = 0, created = excluded.created, updated = excluded.updated, logs = excluded.logs, submitter = excluded.submitter`,
		job.ResourceID, state, string(src), errText, now, now, string(logs), job.Submitter)
	if err != nil {
		return fmt.Errorf("datastore: queue load of %s: %w", job.ResourceID, err)
	}
	if state == "error" {
		l.s.log.Warn("datastore load refused: the user's queue is full", "resource_id", job.ResourceID, "submitter", job.Submitter, "waiting", waiting)
		return &ckan.Error{Status: http.StatusTooManyRequests, Type: ckan.TypeValidation, Message: errText}
	}
	l.s.log.Info("datastore load queued", "resource_id", job.ResourceID, "url", job.URL, "submitter", job.Submitter)
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

// stateLoaded is a job whose table is swapped in but whose resource is not
// yet marked datastore_active (reported as running).
const stateLoaded = "loaded"

// Status is xloader_status: the state of the last load of a resource.
func (l *Loader) Status(ctx context.Context, id string) (map[string]any, error) {
	var state, errText, created, updated, logs string
	var rows int64
	var attempts int
	err := l.s.rd.QueryRowContext(ctx, `SELECT state, error, rows_loaded, attempts, created, updated, logs FROM `+jobsTable+` WHERE resource_id = `+l.s.d.ph(1), id).
		Scan(&state, &errText, &rows, &attempts, &created, &updated, &logs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ckan.NotFound("Resource has no load job")
	}
	if err != nil {
		return nil, fmt.Errorf("datastore: load status: %w", err)
	}
	if state == stateLoaded {
		state = "running" // the table is in place; the resource is being marked
	}
	var logList []any
	_ = json.Unmarshal([]byte(logs), &logList)
	var errObj any
	if errText != "" {
		errObj = map[string]any{"message": errText}
	}
	info := map[string]any{"job_id": id, "status": state, "error": errObj, "logs": logList, "rows_loaded": rows, "attempts": attempts,
		"created": created, "last_updated": updated}
	return map[string]any{"status": state, "job_id": id, "job_url": nil, "last_updated": updated, "created": created, "task_info": info}, nil
}

func (l *Loader) work(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(l.cfg.Poll)
	defer t.Stop()
	for {
		for {
			job, ok := l.claim(ctx)
			if !ok {
				break
			}
			l.run(ctx, job)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.wake:
		}
	}
}

type claimed struct {
	Job
	heartbeat int64
	attempts  int
}

// logLine appends to a job's log (kept to the last 50 lines).
func (l *Loader) logLine(ctx context.Context, id, level, msg string) {
	var logs string
	if err := l.s.rw.QueryRowContext(ctx, `SELECT logs FROM `+jobsTable+` WHERE resource_id = `+l.s.d.ph(1), id).Scan(&logs); err != nil {
		return
	}
	var list []map[string]any
	_ = json.Unmarshal([]byte(logs), &list)
	list = append(list, map[string]any{"level": level, "message": msg, "timestamp": nowText()})
	if len(list) > 50 {
		list = list[len(list)-50:]
	}
	b, _ := json.Marshal(list)
	_, _ = l.s.rw.ExecContext(ctx, `UPDATE `+jobsTable+` SET logs = `+l.s.d.ph(1)+` WHERE resource_id = `+l.s.d.ph(2), string(b), id)
}

// finish records a job's end if owner still holds it ("" for any owner).
func (l *Loader) finish(ctx context.Context, id, owner, state, msg string, rows int64) {
	p := l.s.d.ph
	q := `UPDATE ` + jobsTable + ` SET state = ` + p(1) + `, error = ` + p(2) + `, rows_loaded = ` + p(3) + `, updated = ` + p(4) + ` WHERE resource_id = ` + p(5)
	args := []any{state, msg, rows, nowText(), id}
	if owner != "" {
		q += ` AND owner = ` + p(6) + ` AND state IN ('running', 'loaded')`
		args = append(args, owner)
	}
	if _, err := l.s.rw.ExecContext(ctx, q, args...); err != nil {
		l.s.log.Error("datastore loader: record job end", "resource_id", id, "err", err)
	}
	level := "INFO"
	if state == "error" {
		level = "ERROR"
	}
	if msg == "" {
		msg = fmt.Sprintf("Load %s: %d rows", state, rows)
	}
	l.logLine(ctx, id, level, msg)
}

// errLost means another Submit or worker took the job over.
var errLost = errors.New("the load was superseded")

// heartbeat raises the job's heartbeat and progress; it fails when the job
// is no longer this worker's.
func (l *Loader) heartbeat(ctx context.Context, id string, rows int64) error {
	p := l.s.d.ph
	res, err := l.s.rw.ExecContext(ctx, `UPDATE `+jobsTable+` SET heartbeat = `+p(1)+`, rows_loaded = `+p(2)+`, updated = `+p(3)+` WHERE resource_id = `+p(4)+` AND owner = `+p(5)+` AND state = 'running'`,
		time.Now().UnixMilli(), rows, nowText(), id, l.owner)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errLost
	}
	return nil
}

func (l *Loader) run(ctx context.Context, job claimed) {
	id := job.ResourceID
	log := l.s.log.With("resource_id", id)
	log.Info("datastore load started", "url", job.URL, "attempt", job.attempts)
	start := time.Now()
	// a heartbeat runs beside the load, so that slow sources (a network
	// fetch) are not mistaken for a dead worker
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var progress struct {
		sync.Mutex
		rows int64
	}
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(l.cfg.Lease / 5)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
				progress.Lock()
				n := progress.rows
				progress.Unlock()
				if err := l.heartbeat(lctx, id, n); errors.Is(err, errLost) {
					cancel()
					return
				}
			}
		}
	}()
	rows, err := l.load(lctx, job.Job, func(n int64) {
		progress.Lock()
		progress.rows = n
		progress.Unlock()
	})
	cancel()
	<-hbDone
	if ctx.Err() != nil {
		// shutting down: the job stays running and is taken over after the lease
		return
	}
	switch {
	case errors.Is(err, errLost) || (err != nil && lctx.Err() != nil && ctx.Err() == nil && errors.Is(err, context.Canceled)):
		log.Info("datastore load superseded")
	case err != nil:
		log.Warn("datastore load failed", "err", err)
		l.finish(ctx, id, l.owner, "error", publicMessage(err), rows)
	default:
		// The resource is marked datastore_active before the job reads
		// complete, so a client that saw "complete" finds the flag set; a
		// process that stops in between leaves the job "loaded", redone
		// after the lease.
		if l.cfg.Loaded != nil {
			l.cfg.Loaded(ctx, id)
		}
		l.finish(ctx, id, l.owner, "complete", "", rows) // error stays empty
		log.Info("datastore load complete", "rows", rows, "seconds", time.Since(start).Seconds())
	}
}

// open opens the job's file: an upload through the configured hook, a link
// over HTTP(S) under the egress policy, bounded by the idle and fetch
// timeouts.
func (l *Loader) open(ctx context.Context, job Job) (io.ReadCloser, error) {
	if job.URLType == "upload" {
		if l.cfg.OpenUpload == nil {
			return nil, errors.New("uploaded files cannot be loaded: the FileStore is not connected to the DataStore loader")
		}
		return l.cfg.OpenUpload(ctx, job)
	}
	return egress.Get(ctx, l.client, job.URL, egress.FetchOptions{IdleTimeout: l.cfg.IdleTimeout, Timeout: l.cfg.FetchTimeout})
}

// publicMessage is the text a failed load shows in xloader_status: a
// fetch's failure as egress words it for users (the cause is in the log
// only, so that loads cannot probe ports), anything else as it is.
func publicMessage(err error) string {
	var fe *egress.FetchError
	if errors.As(err, &fe) {
		return fe.Public
	}
	return err.Error()
}

// load reads the file into a staging table and, when every row is in,
// swaps it for the resource's table in one transaction that also records
// the job as complete. Nothing of a failed or interrupted load is ever
// visible: the staging table is not a DataStore table.
func (l *Loader) load(ctx context.Context, job Job, progress func(int64)) (int64, error) {
	s := l.s
	id := job.ResourceID
	staging := id + "__load"
	src, err := l.open(ctx, job)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	// first pass: decode into a spool file while guessing the types
	spool, err := os.CreateTemp("", "toxgate-load-*.csv")
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	raw := &io.LimitedReader{R: src, N: l.cfg.MaxBytes + 1}
	limited := raw // what the text is read through: the file, or what it expands to
	var in io.Reader = limited
	br := bufio.NewReaderSize(limited, 4096)
	if isGzip(br) {
		// a gzip-compressed file (.csv.gz): its text
		if br, limited, err = gunzip(br, l.cfg.MaxBytes); err != nil {
			return 0, err
		}
	}
	if isZip(br) {
		// an XLSX workbook: its first sheet, as CSV
		sheet, err := xlsxToCSV(br, l.cfg.MaxBytes)
		if err != nil {
			return 0, err
		}
		defer os.Remove(sheet.Name())
		defer sheet.Close()
		// the sheet as CSV may be larger than the workbook (it is compressed)
		limited = &io.LimitedReader{R: sheet, N: maxInflate*l.cfg.MaxBytes + 1}
		in = limited
	} else {
		in = br
	}
	text, enc, sample, err := decodeText(in)
	if err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	delim := sniffDelimiter(sample, job.Format)
	cr := newCSV(io.TeeReader(text, spool), delim)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return 0, errors.New("the file is empty: no header row")
	}
	if err != nil {
		return 0, fmt.Errorf("cannot parse the file as CSV: %w", err)
	}
	names := headerNames(header)
	if len(names) > s.lim.MaxColumns {
		return 0, fmt.Errorf("the file has %d columns, more than %d (datastore.max_columns)", len(names), s.lim.MaxColumns)
	}
	g := newGuesser(len(names))
	var total int64
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if raw.N <= 0 { // cut at the limit, inside a compressed stream
				return 0, fmt.Errorf("the file is larger than %d bytes", l.cfg.MaxBytes)
			}
			return 0, fmt.Errorf("cannot parse the file as CSV: %w", err)
		}
		if isBlank(row) {
			continue
		}
		if len(row) > len(names) {
			return 0, fmt.Errorf("line %d has %d cells but the header has %d", total+2, len(row), len(names))
		}
		for i, c := range row {
			if len(c) > s.lim.MaxCellBytes {
				return 0, fmt.Errorf("line %d, column %q: a cell of %d bytes is larger than %d (datastore.max_cell_bytes)", total+2, names[i], len(c), s.lim.MaxCellBytes)
			}
		}
		g.add(row)
		total++
	}
	if raw.N <= 0 {
		return 0, fmt.Errorf("the file is larger than %d bytes", l.cfg.MaxBytes)
	}
	if limited.N <= 0 {
		return 0, fmt.Errorf("the file expands to more than %d bytes", maxInflate*l.cfg.MaxBytes)
	}
	types := g.types()
	fields := make([]Field, len(names))
	kinds := make([]kind, len(names))
	for i := range names {
		fields[i] = Field{ID: names[i], Type: types[i]}
		kinds[i], _ = parseType(types[i])
	}
	l.logLine(ctx, id, "INFO", fmt.Sprintf("Read %d rows, %d columns (encoding %s, delimiter %q); loading", total, len(names), enc, delim))
	// second pass: insert into the staging table
	if _, err := s.rw.ExecContext(ctx, "DROP TABLE IF EXISTS "+quote(staging)); err != nil {
		return 0, fmt.Errorf("drop staging table: %w", err)
	}
	if err := s.createTable(ctx, s.rw, staging, fields); err != nil {
		return 0, err
	}
	defer func() { _, _ = s.rw.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+quote(staging)) }()
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	cr = newCSV(spool, delim)
	if _, err := cr.Read(); err != nil {
		return 0, err
	}
	perStmt := 30000 / len(names)
	if perStmt > 500 {
		perStmt = 500
	}
	if perStmt < 1 {
		perStmt = 1
	}
	cols := quoteList(names)
	var bytes int64
	var loaded int64
	batch := make([]any, 0, perStmt*len(names))
	nrows := 0
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	flush := func() error {
		if nrows == 0 {
			return nil
		}
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + quote(staging) + " (" + cols + ") VALUES ")
		n := 0
		for r := 0; r < nrows; r++ {
			if r > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			for c := range names {
				if c > 0 {
					sb.WriteString(", ")
				}
				n++
				sb.WriteString(s.d.ph(n))
			}
			sb.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, sb.String(), batch...); err != nil {
			return fmt.Errorf("insert rows: %w", err)
		}
		batch, nrows = batch[:0], 0
		return nil
	}
	line := int64(1)
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return loaded, fmt.Errorf("cannot parse the file as CSV: %w", err)
		}
		line++
		if isBlank(row) {
			continue
		}
		for i := range names {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			var v any
			if kinds[i].base == "text" {
				v = cell
			} else if v, err = coerce(kinds[i], strings.TrimSpace(cell)); err != nil {
				return loaded, fmt.Errorf("line %d, column %q: %v", line, names[i], err)
			}
			bytes += int64(cellSize(v))
			batch = append(batch, s.d.encode(kinds[i], v))
		}
		if bytes > s.lim.MaxTableBytes {
			return loaded, fmt.Errorf("the table would exceed %d bytes (datastore.max_table_bytes)", s.lim.MaxTableBytes)
		}
		nrows++
		loaded++
		if nrows == perStmt {
			if err := flush(); err != nil {
				return loaded, err
			}
		}
		if loaded%20000 == 0 {
			// commit in steps so that other writers are not held up
			if err := flush(); err != nil {
				return loaded, err
			}
			if err := tx.Commit(); err != nil {
				return loaded, fmt.Errorf("commit: %w", err)
			}
			progress(loaded)
			// report progress now (the connection is free between batches);
			// a superseded load stops here
			if err := l.heartbeat(ctx, id, loaded); errors.Is(err, errLost) {
				return loaded, errLost
			}
			if tx, err = s.begin(ctx); err != nil {
				return loaded, err
			}
		}
	}
	if err := flush(); err != nil {
		return loaded, err
	}
	// the swap: the staging table becomes the resource's table, with its
	// metadata and the job's completion, all or nothing
	p := s.d.ph
	res, err := tx.ExecContext(ctx, `UPDATE `+jobsTable+` SET state = '`+stateLoaded+`', error = '', rows_loaded = `+p(1)+`, updated = `+p(2)+` WHERE resource_id = `+p(3)+` AND owner = `+p(4)+` AND state = 'running'`,
		loaded, nowText(), id, l.owner)
	if err != nil {
		return loaded, fmt.Errorf("record completion: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return loaded, errLost
	}
	if err := s.dropTable(ctx, tx, id); err != nil {
		return loaded, err
	}
	if _, err := tx.ExecContext(ctx, "ALTER TABLE "+quote(staging)+" RENAME TO "+quote(id)); err != nil {
		return loaded, fmt.Errorf("rename staging table: %w", err)
	}
	t := &table{ID: id, Fields: fields, Bytes: bytes}
	if err := s.saveTable(ctx, tx, t); err != nil {
		return loaded, err
	}
	if err := tx.Commit(); err != nil {
		return loaded, fmt.Errorf("commit: %w", err)
	}
	s.analyze(ctx, id)
	l.logLine(context.Background(), id, "INFO", fmt.Sprintf("Loaded %d rows", loaded))
	return loaded, nil
}

func isBlank(row []string) bool {
	for _, c := range row {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
