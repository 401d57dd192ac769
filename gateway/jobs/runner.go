package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/gateway/internal/csvcell"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/plugins/contract"
)

// Start runs this gateway's workers until Close.
func (s *Service) Start() {
	s.wg.Add(1)
	go s.poll()
	for range s.cfg.Workers {
		s.wg.Add(1)
		go s.work()
	}
}

// Close stops the workers; the chunks they held are released for others.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobs: close: %w", ctx.Err())
	}
}

// poll refreshes the list of jobs not yet over.
func (s *Service) poll() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		js, err := s.db.active(ctx)
		cancel()
		if err != nil {
			s.log.Warn("listing jobs", "err", err)
		} else {
			s.mu.Lock()
			s.active = js
			s.mu.Unlock()
			if len(js) > 0 {
				s.poke()
			}
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// work claims and scores chunks until Close.
func (s *Service) work() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		if !s.workOnce() {
			select {
			case <-s.stop:
				return
			case <-s.wake:
			case <-time.After(s.cfg.Poll):
			}
		}
	}
}

// workOnce scores one chunk of some active job; false when none was free.
func (s *Service) workOnce() bool {
	s.mu.Lock()
	js := append([]Job(nil), s.active...)
	s.mu.Unlock()
	ctx := context.Background()
	for i := range js {
		j := &js[i]
		if s.cancelled(ctx, j.ID) {
			if err := s.finish(ctx, j, StateCancelled, "cancelled"); err != nil {
				s.log.Warn("finishing a cancelled job", "job", j.ID, "err", err)
			}
			s.drop(j.ID)
			continue
		}
		chunk, epoch, ok, err := s.claim(ctx, j)
		if err != nil {
			s.log.Warn("claiming a chunk", "job", j.ID, "err", err)
			continue
		}
		if ok {
			s.runChunk(j, chunk, epoch)
			return true
		}
	}
	return false
}

// drop forgets a job that is over.
func (s *Service) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cursors, id)
	for i := range s.active {
		if s.active[i].ID == id {
			s.active = append(s.active[:i:i], s.active[i+1:]...)
			break
		}
	}
}

type probe int

const (
	probeFree probe = iota
	probeHeld
	probeDone
)

// probeChunk finds a chunk's state and the epoch of the next lease to take.
func (s *Service) probeChunk(ctx context.Context, j *Job, chunk int) (probe, int, *lease, error) {
	var last *lease
	epoch := 0
	for ; ; epoch++ {
		l, err := s.db.lease(ctx, j.ID, chunkLeaseID(chunk, epoch))
		if err != nil {
			return 0, 0, nil, err
		}
		if l == nil {
			break
		}
		if l.Done {
			return probeDone, 0, l, nil
		}
		last = l
	}
	if last != nil && last.Until.After(time.Now()) {
		return probeHeld, 0, last, nil
	}
	return probeFree, epoch, last, nil
}

// claim takes a lease on the next free chunk of j in this gateway's pass
// over it. A pass that finds every chunk done finishes the job.
func (s *Service) claim(ctx context.Context, j *Job) (int, int, bool, error) {
	for {
		s.mu.Lock()
		c := s.cursors[j.ID]
		if c == nil {
			c = &cursor{}
			s.cursors[j.ID] = c
		}
		if c.next >= j.Chunks {
			allDone := c.passDone == j.Chunks
			if !allDone && time.Now().Before(c.rescanAt) {
				s.mu.Unlock()
				return 0, 0, false, nil
			}
			c.next, c.passDone, c.rescanAt = 0, 0, time.Now().Add(s.cfg.Lease/4)
			s.mu.Unlock()
			if allDone {
				if err := s.finish(ctx, j, StateSucceeded, ""); err != nil {
					return 0, 0, false, err
				}
				return 0, 0, false, nil
			}
			continue
		}
		chunk := c.next
		c.next++
		s.mu.Unlock()
		st, epoch, last, err := s.probeChunk(ctx, j, chunk)
		if err != nil {
			return 0, 0, false, err
		}
		switch st {
		case probeDone:
			s.mu.Lock()
			c.passDone++
			s.mu.Unlock()
			continue
		case probeHeld:
			continue
		}
		if epoch >= maxAttempts {
			reason := fmt.Sprintf("rows %d to %d failed %d times", chunk*j.ChunkRows+1, min((chunk+1)*j.ChunkRows, j.Total), epoch)
			if last != nil && last.Reason != "" {
				reason += "; last: " + last.Reason
			}
			return 0, 0, false, s.finish(ctx, j, StateFailed, reason)
		}
		now := time.Now()
		ok, err := insert(ctx, s.db.leases(j.ID), lease{ID: chunkLeaseID(chunk, epoch), Owner: s.owner, Since: now, Until: now.Add(s.cfg.Lease)})
		if err != nil {
			return 0, 0, false, err
		}
		if ok {
			return chunk, epoch, true, nil
		}
	}
}

// renew keeps lease id of job alive until the returned function is called;
// ctx's cancel is called when the job gets a cancel request.
func (s *Service) renew(job, id string, cancel context.CancelFunc) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-s.stop:
				cancel()
				return
			case <-t.C:
			}
			ctx, c := context.WithTimeout(context.Background(), s.cfg.Lease/3)
			if err := s.db.set(ctx, s.db.leases(job), id, bson.D{{Key: "until", Value: time.Now().Add(s.cfg.Lease)}}); err != nil {
				s.log.Warn("renewing a lease", "job", job, "lease", id, "err", err)
			}
			if s.cancelled(ctx, job) {
				cancel()
			}
			c()
		}
	}()
	return func() { close(stop); <-done }
}

// runChunk scores one leased chunk and records its answers.
func (s *Service) runChunk(j *Job, chunk, epoch int) {
	id := chunkLeaseID(chunk, epoch)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopRenew := s.renew(j.ID, id, cancel)
	items, failed, err := s.score(ctx, j, chunk)
	stopRenew()
	bg := context.Background()
	if err != nil {
		var fatal *fatalError
		if errors.As(err, &fatal) {
			if ferr := s.finish(bg, j, StateFailed, fatal.Error()); ferr != nil {
				s.log.Warn("failing a job", "job", j.ID, "err", ferr)
			}
			return
		}
		// Give the chunk back at once, with the reason, for another attempt.
		s.log.Warn("chunk not scored; released", "job", j.ID, "chunk", chunk, "err", err)
		_ = s.db.set(bg, s.db.leases(j.ID), id, bson.D{{Key: "until", Value: time.Now()}, {Key: "reason", Value: err.Error()}})
		return
	}
	if _, err := insert(bg, s.db.rows(j.ID), outRows{ID: outID(chunk), Items: items}); err != nil {
		s.log.Warn("chunk answers not stored; released", "job", j.ID, "chunk", chunk, "err", err)
		_ = s.db.set(bg, s.db.leases(j.ID), id, bson.D{{Key: "until", Value: time.Now()}, {Key: "reason", Value: err.Error()}})
		return
	}
	if err := s.db.set(bg, s.db.leases(j.ID), id, bson.D{{Key: "done", Value: true}, {Key: "rows", Value: len(items)},
		{Key: "failed", Value: failed}, {Key: "until", Value: time.Now()}}); err != nil {
		s.log.Warn("chunk done but not marked; it will be scored again", "job", j.ID, "chunk", chunk, "err", err)
		return
	}
	if s.allDone(bg, j) {
		if err := s.finish(bg, j, StateSucceeded, ""); err != nil {
			s.log.Warn("finishing a job", "job", j.ID, "err", err)
		}
	}
}

// allDone reports whether every chunk of j has a done lease.
func (s *Service) allDone(ctx context.Context, j *Job) bool {
	ls, err := s.db.allLeases(ctx, j.ID)
	if err != nil {
		return false
	}
	done := map[string]bool{}
	for _, l := range ls {
		if chunk, _, ok := strings.Cut(l.ID, "/"); ok && l.Done && strings.HasPrefix(chunk, "c") {
			done[chunk] = true
		}
	}
	return len(done) == j.Chunks
}

// fatalError fails the whole job (the model is gone or changed).
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }

// score runs the model on a chunk's rows: one answer per row, in order.
func (s *Service) score(ctx context.Context, j *Job, chunk int) ([]string, int, error) {
	ref, ok := s.models.Resolve(j.Route)
	if !ok {
		return nil, 0, &fatalError{"model route " + j.Route + " is no longer served"}
	}
	if ref.ModuleSHA256 != j.ModuleSHA256 {
		return nil, 0, &fatalError{fmt.Sprintf("module %s was replaced during the job (sha256 %s, now %s %s); a result must come from one module",
			j.Model, j.ModuleSHA256, ref.Version, ref.ModuleSHA256)}
	}
	m, err := newMapping(ref, j.Column)
	if err != nil {
		return nil, 0, &fatalError{err.Error()}
	}
	if err := m.check(j.Columns); err != nil {
		return nil, 0, &fatalError{err.Error()}
	}
	var in inRows
	if err := s.db.rows(j.ID).FindOne(ctx, bson.D{{Key: "_id", Value: inID(chunk)}}).Decode(&in); err != nil {
		return nil, 0, fmt.Errorf("reading rows of chunk %d: %w", chunk, err)
	}
	rows, err := in.cells()
	if err != nil {
		return nil, 0, err
	}
	items := make([]string, len(rows))
	caller := modelapi.BackgroundPrefix + j.ID
	call := func(body []byte) ([]byte, error) {
		for attempt := 0; ; attempt++ {
			out, _, err := s.models.Invoke(ctx, j.Route, caller, body)
			var ce *modelapi.CallError
			if err != nil && errors.As(err, &ce) && (ce.Status == http.StatusTooManyRequests || ce.Code == modelapi.CodeUnavailable || ce.Code == modelapi.CodeOverloaded) && attempt < 20 && ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
				}
				continue
			}
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return out, err
		}
	}
	if !m.batch {
		// a smiles property's cells may be names and identifiers too
		var resolved []*resolution
		col, hasSMILES := m.cols["smiles"]
		if hasSMILES {
			resolved = s.resolveCells(ctx, j, rows, col, items)
		}
		for i, row := range rows {
			if items[i] != "" {
				continue
			}
			if hasSMILES && resolved[i] != nil {
				row = append([]string(nil), row...)
				row[col] = resolved[i].SMILES
			}
			body, err := m.rowInput(row)
			if err != nil {
				items[i] = rowError(err.Error())
				continue
			}
			out, err := call(body)
			if err != nil {
				if rowErr, ok := rowLevel(err); ok {
					items[i] = rowError(rowErr)
					continue
				}
				return nil, 0, err
			}
			items[i] = string(out)
		}
		for i, r := range resolved {
			if r != nil && items[i] != "" {
				items[i] = withResolution(items[i], r)
			}
		}
		return items, countErrors(items), nil
	}
	for i, row := range rows {
		if cell(row, m.colIdx) == "" {
			items[i] = rowError("no structure in column " + m.column)
		}
	}
	// names and identifiers in the structure column, resolved to SMILES
	resolved := s.resolveCells(ctx, j, rows, m.colIdx, items)
	structure := func(i int) string {
		if r := resolved[i]; r != nil {
			return r.SMILES
		}
		return cell(rows[i], m.colIdx)
	}
	var pending []int
	for i := range rows {
		if items[i] == "" {
			pending = append(pending, i)
		}
	}
	for start := 0; start < len(pending); start += s.cfg.CallRows {
		idx := append([]int(nil), pending[start:min(start+s.cfg.CallRows, len(pending))]...)
		for len(idx) > 0 {
			smiles := make([]string, len(idx))
			for k, i := range idx {
				smiles[k] = structure(i)
			}
			out, err := call(m.batchInput(smiles))
			if err == nil {
				answers, perr := m.batchOutput(out)
				if perr != nil || len(answers) != len(idx) {
					return nil, 0, fmt.Errorf("model answered %d items for %d structures (%v)", len(answers), len(idx), perr)
				}
				for k, i := range idx {
					items[i] = answerItem(answers[k])
				}
				break
			}
			var ce *modelapi.CallError
			if !errors.As(err, &ce) {
				return nil, 0, err
			}
			// A row the model refuses gets its error; the others go again.
			if k, ok := itemIndex(ce.Field, m.ref.Batch.Input); ok && k < len(idx) {
				items[idx[k]] = rowError(ce.Message)
				idx = append(idx[:k], idx[k+1:]...)
				continue
			}
			if _, ok := rowLevel(err); !ok {
				return nil, 0, err
			}
			// A failure without a row named: score the rows one by one.
			for _, i := range idx {
				out, err := call(m.batchInput([]string{structure(i)}))
				if err != nil {
					msg, ok := rowLevel(err)
					if !ok {
						return nil, 0, err
					}
					items[i] = rowError(msg)
					continue
				}
				answers, perr := m.batchOutput(out)
				if perr != nil || len(answers) != 1 {
					return nil, 0, fmt.Errorf("model answered %d items for 1 structure (%v)", len(answers), perr)
				}
				items[i] = answerItem(answers[0])
			}
			break
		}
	}
	for i, r := range resolved {
		if r != nil && items[i] != "" {
			items[i] = withResolution(items[i], r)
		}
	}
	return items, countErrors(items), nil
}

// answerItem is a batch answer's row as the job stores it: a row the model
// answered with its own "error" (a SMILES of the list it could not read)
// becomes an error row, like a row the model refused.
func answerItem(a json.RawMessage) string {
	if !bytes.Contains(a, []byte(`"error"`)) {
		return string(a)
	}
	var r struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(a, &r) != nil || r.Error == nil {
		return string(a)
	}
	return rowError(r.Error.Message)
}

// rowLevel reports whether a call's failure is the row's (bad input, or
// the model failing on it) rather than the gateway's, and its message.
func rowLevel(err error) (string, bool) {
	var ce *modelapi.CallError
	if !errors.As(err, &ce) {
		return "", false
	}
	switch {
	case ce.Status == http.StatusUnprocessableEntity || ce.Status == http.StatusBadRequest || ce.Status == http.StatusRequestEntityTooLarge:
	case ce.Status == http.StatusNotFound && ce.Field != "":
	case ce.Code == modelapi.CodeModelError || ce.Code == modelapi.CodeModuleCrashed || ce.Code == modelapi.CodeOutOfMemory ||
		ce.Code == modelapi.CodeTimeout || ce.Code == modelapi.CodeOutputTooLarge:
	default:
		return "", false
	}
	msg := ce.Message
	if ce.Field != "" && !strings.Contains(msg, ce.Field) {
		msg = ce.Field + ": " + msg
	}
	return msg + " (" + ce.Code + ")", true
}

// itemIndex reads k from a field "input[k]...".
func itemIndex(field, input string) (int, bool) {
	rest, ok := strings.CutPrefix(field, input+"[")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "]")
	k, err := strconv.Atoi(num)
	return k, ok && err == nil && k >= 0
}

func countErrors(items []string) int {
	n := 0
	for _, it := range items {
		if strings.HasPrefix(it, `{"error":`) {
			n++
		}
	}
	return n
}

// finish ends j with outcome kind (succeeded: its result resource is
// written first). Whoever inserts the job's finishing lease first decides
// the outcome; a finisher that dies is relieved once its lease expires.
func (s *Service) finish(ctx context.Context, j *Job, kind, reason string) error {
	var id string
	for epoch := 0; ; {
		l, err := s.db.lease(ctx, j.ID, finalLeaseID(epoch))
		if err != nil {
			return err
		}
		if l == nil {
			now := time.Now()
			ok, err := insert(ctx, s.db.leases(j.ID), lease{ID: finalLeaseID(epoch), Owner: s.owner, Since: now, Until: now.Add(s.cfg.Lease), Kind: kind, Reason: reason})
			if err != nil {
				return err
			}
			if !ok {
				continue // someone came first: read theirs
			}
			id = finalLeaseID(epoch)
			break
		}
		if l.Done || l.Until.After(time.Now()) {
			if l.Done {
				s.drop(j.ID)
			}
			return nil // over, or being finished
		}
		kind, reason = l.Kind, l.Reason // the outcome is decided; carry it on
		epoch++
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopRenew := s.renew(j.ID, id, func() {})
	defer stopRenew()
	fresh, err := s.db.job(fctx, j.ID)
	if err != nil {
		return err
	}
	if fresh == nil || Terminal(fresh.State) {
		if fresh != nil {
			s.releaseSlot(ctx, fresh)
		}
		return s.db.set(ctx, s.db.leases(j.ID), id, bson.D{{Key: "done", Value: true}})
	}
	done, failed := s.counts(fctx, j)
	set := bson.D{{Key: "state", Value: kind}, {Key: "done", Value: done}, {Key: "failed", Value: failed}, {Key: "finished", Value: time.Now().UTC()}}
	if kind == StateSucceeded {
		resID, err := s.writeResult(fctx, j, failed)
		var e *Error
		switch {
		case errors.As(err, &e) && e.Status < 500:
			set[0].Value, reason = StateFailed, "the result could not be added to dataset "+j.PackageID+": "+e.Message
		case err != nil:
			// Let another attempt write it (this lease lapses at once).
			_ = s.db.set(ctx, s.db.leases(j.ID), id, bson.D{{Key: "until", Value: time.Now()}})
			return err
		default:
			set = append(set, bson.E{Key: "result_resource_id", Value: resID})
		}
	}
	if reason != "" {
		set = append(set, bson.E{Key: "error", Value: reason})
	}
	if err := s.db.set(ctx, s.db.jobs(), j.ID, set); err != nil {
		_ = s.db.set(ctx, s.db.leases(j.ID), id, bson.D{{Key: "until", Value: time.Now()}})
		return err
	}
	s.releaseSlot(ctx, fresh)
	_ = s.db.set(ctx, s.db.leases(j.ID), id, bson.D{{Key: "done", Value: true}})
	if err := s.db.rows(j.ID).Drop(ctx); err != nil {
		s.log.Warn("dropping a finished job's rows", "job", j.ID, "err", err)
	}
	s.log.Info("job finished", "job", j.ID, "state", set[0].Value, "rows", done, "failed_rows", failed, "reason", reason)
	s.drop(j.ID)
	return nil
}

// counts sums the rows of j's done chunks.
func (s *Service) counts(ctx context.Context, j *Job) (done, failed int) {
	ls, _ := s.db.allLeases(ctx, j.ID)
	seen := map[string]bool{}
	for _, l := range ls {
		chunk, _, ok := strings.Cut(l.ID, "/")
		if ok && l.Done && strings.HasPrefix(chunk, "c") && !seen[chunk] {
			seen[chunk] = true
			done += l.Rows
			failed += l.Failed
		}
	}
	return done, failed
}

// writeResult writes j's answers, beside its input columns, as a CSV file
// and adds it to the job's dataset as the job's user, with the provenance
// in the resource's fields.
func (s *Service) writeResult(ctx context.Context, j *Job, failed int) (string, error) {
	// Pass 1: the answers' columns, in order of first appearance.
	var cols []string
	seen := map[string]bool{modelapi.ProvenanceMember: true, "error": true}
	for chunk := 0; chunk < j.Chunks; chunk++ {
		out, err := s.outRows(ctx, j, chunk)
		if err != nil {
			return "", err
		}
		for _, it := range out.Items {
			ms, err := modelapi.ObjectMembers([]byte(it))
			if err != nil {
				return "", fmt.Errorf("chunk %d: answer is not an object: %w", chunk, err)
			}
			for _, m := range ms {
				if !seen[m.Key] {
					seen[m.Key] = true
					cols = append(cols, m.Key)
				}
			}
		}
	}
	header := append([]string(nil), j.Columns...)
	inCols := map[string]bool{}
	for _, c := range j.Columns {
		inCols[c] = true
	}
	for _, c := range cols {
		if inCols[c] {
			c = j.Model + "_" + c
		}
		header = append(header, c)
	}
	header = append(header, "error")
	name := strings.TrimSuffix(j.InputFilename, ".csv")
	name = strings.TrimSuffix(name, ".tsv")
	filename := name + "-" + j.Model + "-scores.csv"
	w, err := s.files.Create(ctx, filename, s.cfg.MaxResultBytes)
	if err != nil {
		return "", err
	}
	committed := false
	defer func() {
		if !committed {
			_ = w.Abort(context.WithoutCancel(ctx))
		}
	}()
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return "", err
	}
	rec := make([]string, len(header))
	// Pass 2: every row, in order.
	for chunk := 0; chunk < j.Chunks; chunk++ {
		var in inRows
		if err := s.db.rows(j.ID).FindOne(ctx, bson.D{{Key: "_id", Value: inID(chunk)}}).Decode(&in); err != nil {
			return "", fmt.Errorf("reading rows of chunk %d: %w", chunk, err)
		}
		rows, err := in.cells()
		if err != nil {
			return "", err
		}
		out, err := s.outRows(ctx, j, chunk)
		if err != nil {
			return "", err
		}
		if len(out.Items) != len(rows) {
			return "", fmt.Errorf("chunk %d has %d answers for %d rows", chunk, len(out.Items), len(rows))
		}
		for r, row := range rows {
			for i := range rec {
				rec[i] = ""
			}
			copy(rec[:len(j.Columns)], row[:min(len(row), len(j.Columns))])
			ms, _ := modelapi.ObjectMembers([]byte(out.Items[r]))
			for _, m := range ms {
				if m.Key == "error" {
					rec[len(rec)-1] = csvcell.Raw(m.Val)
					continue
				}
				for k, c := range cols {
					if c == m.Key {
						rec[len(j.Columns)+k] = csvcell.Raw(m.Val)
						break
					}
				}
			}
			if err := cw.Write(rec); err != nil {
				return "", err
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return "", err
	}
	info, err := w.Commit()
	if err != nil {
		return "", err
	}
	committed = true
	now := time.Now().UTC().Format(time.RFC3339)
	body := map[string]any{
		"package_id":         j.PackageID,
		"name":               fmt.Sprintf("%s scores of %s", j.Model, j.InputFilename),
		"description":        fmt.Sprintf("Model %s %s (module sha256 %s, route %s) applied to column %q of resource %s (sha256 %s%s) by %s at %s; %d rows, %d with an error. Job %s.", j.Model, j.Version, j.ModuleSHA256, j.Route, j.Column, j.ResourceID, j.InputSHA256, versionNote(j), j.User, now, j.Total, failed, j.ID),
		"format":             "CSV",
		"url_type":           "upload",
		"model":              j.Model,
		"model_version":      j.Version,
		"module_sha256":      j.ModuleSHA256,
		"model_route":        j.Route,
		"input_resource_id":  j.ResourceID,
		"input_sha256":       j.InputSHA256,
		"input_version":      j.InputVersion,
		"input_version_name": j.InputVersionName,
		"input_column":       j.Column,
		"scored_at":          now,
		"scored_by":          j.User,
		"job_id":             j.ID,
		"failed_rows":        strconv.Itoa(failed),
	}
	up := &contract.Upload{FileID: info.ID, Filename: info.Filename, Mimetype: "text/csv", Size: info.Size, SHA256: info.SHA256}
	res, err := s.catalogCall(ctx, "resource_create", contract.Identity{UserID: j.UserID, Name: j.User, Sysadmin: j.Sysadmin}, body, up)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			_ = s.files.Delete(context.WithoutCancel(ctx), info.ID)
		}
		return "", err
	}
	id, _ := res["id"].(string)
	return id, nil
}

// versionNote names the dataset version scored, for the description.
func versionNote(j *Job) string {
	if j.InputVersion == "" {
		return ""
	}
	return ", dataset version " + j.InputVersionName + " " + j.InputVersion
}

func (s *Service) outRows(ctx context.Context, j *Job, chunk int) (*outRows, error) {
	var out outRows
	if err := s.db.rows(j.ID).FindOne(ctx, bson.D{{Key: "_id", Value: outID(chunk)}}).Decode(&out); err != nil {
		return nil, fmt.Errorf("reading answers of chunk %d: %w", chunk, err)
	}
	return &out, nil
}
