package jobs

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/plugins/contract"
)

// MaxDifferenceRows is the most changed rows a rerun's differences list;
// the counts are always whole.
const MaxDifferenceRows = 100

// Differences are a rerun's predictions compared, row by row, with those
// of the job it repeats: the same input (the same dataset version), the
// module of the day.
type Differences struct {
	// Against is the job repeated.
	Against string `bson:"against" json:"against"`
	// ModuleSHA256From and ModuleSHA256To are the modules compared.
	ModuleSHA256From string `bson:"module_sha256_from" json:"module_sha256_from"`
	ModuleSHA256To   string `bson:"module_sha256_to" json:"module_sha256_to"`
	// Columns are the model's columns compared (and error).
	Columns []string `bson:"columns" json:"columns"`
	// Compared and Changed count the rows.
	Compared int `bson:"compared" json:"rows_compared"`
	Changed  int `bson:"changed" json:"rows_changed"`
	// Rows are the first MaxDifferenceRows changed rows.
	Rows []RowChange `bson:"rows" json:"rows"`
}

// RowChange is one input row whose predictions changed.
type RowChange struct {
	// Row is the row's number in the input (1 is the first after the
	// header).
	Row int `bson:"row" json:"row"`
	// Input is the row's scored column (the SMILES), when the model has one.
	Input string `bson:"input,omitempty" json:"input,omitempty"`
	// From and To are the changed columns' values before and now.
	From map[string]string `bson:"from" json:"from"`
	To   map[string]string `bson:"to" json:"to"`
}

// Rerun scores the input of job id again, as of the same dataset version,
// with the module the job's route serves today; the new job's status
// carries the differences once it succeeded.
func (s *Service) Rerun(ctx context.Context, c contract.Identity, id string) (*Status, error) {
	j, err := s.visible(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if j.State != StateSucceeded || j.ResultResourceID == "" {
		return nil, errorf(http.StatusConflict, "conflict", "", "job %s has not succeeded; only a succeeded job is rerun", id)
	}
	if j.InputVersion == "" {
		return nil, errorf(http.StatusConflict, "conflict", "", "job %s recorded no dataset version of its input (jobs.version_input was off), so its input cannot be scored again as it was", id)
	}
	model := j.Route
	if model == "" {
		model = j.Model
	}
	return s.Create(ctx, c, Request{Model: model, ResourceID: j.ResourceID, SMILESColumn: j.Column, PackageID: j.PackageID,
		InputVersion: j.InputVersion, rerunOf: j.ID})
}

// differences computes (once) and records the differences of rerun j.
func (s *Service) differences(ctx context.Context, c contract.Identity, j *Job) error {
	if j.RerunOf == "" || j.State != StateSucceeded || j.Differences != nil {
		return nil
	}
	orig, err := s.db.job(ctx, j.RerunOf)
	if err != nil || orig == nil {
		return fmt.Errorf("the job rerun: %v", err)
	}
	a, err := s.openResult(ctx, c, orig.ResultResourceID)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := s.openResult(ctx, c, j.ResultResourceID)
	if err != nil {
		return err
	}
	defer b.Close()
	d, err := compareResults(a, b, len(j.Columns), j.Column)
	if err != nil {
		return err
	}
	d.Against, d.ModuleSHA256From, d.ModuleSHA256To = orig.ID, orig.ModuleSHA256, j.ModuleSHA256
	j.Differences = d
	return s.db.set(ctx, s.db.jobs(), j.ID, bson.D{{Key: "differences", Value: d}})
}

// openResult opens the file of a result resource, read as c.
func (s *Service) openResult(ctx context.Context, c contract.Identity, resID string) (io.ReadCloser, error) {
	f, err := s.catalogCall(ctx, "resource_file", c, map[string]any{"id": resID}, nil)
	if err != nil {
		return nil, err
	}
	fileID, _ := f["file_id"].(string)
	info, err := s.files.Stat(ctx, fileID)
	if err != nil {
		return nil, fmt.Errorf("result file of %s: %w", resID, err)
	}
	return s.files.Open(ctx, info, 0, info.Size)
}

// compareResults compares two result CSVs row by row: the columns after
// the first inputs (the model's and error) by name.
func compareResults(a, b io.Reader, inputs int, column string) (*Differences, error) {
	ra, rb := csv.NewReader(a), csv.NewReader(b)
	ra.FieldsPerRecord, rb.FieldsPerRecord = -1, -1
	ha, err := ra.Read()
	if err != nil {
		return nil, fmt.Errorf("the first result: %w", err)
	}
	hb, err := rb.Read()
	if err != nil {
		return nil, fmt.Errorf("the rerun's result: %w", err)
	}
	idx := func(h []string) map[string]int {
		m := map[string]int{}
		for i, n := range h {
			if i >= inputs {
				m[n] = i
			}
		}
		return m
	}
	ia, ib := idx(ha), idx(hb)
	var cols []string
	for _, n := range hb[min(inputs, len(hb)):] {
		cols = append(cols, n)
	}
	for _, n := range ha[min(inputs, len(ha)):] {
		if _, ok := ib[n]; !ok {
			cols = append(cols, n)
		}
	}
	in := -1
	for i, n := range ha {
		if i < inputs && strings.EqualFold(n, column) {
			in = i
		}
	}
	cell := func(rec []string, m map[string]int, n string) string {
		if i, ok := m[n]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	d := &Differences{Columns: cols, Rows: []RowChange{}}
	for row := 1; ; row++ {
		x, errA := ra.Read()
		y, errB := rb.Read()
		if errors.Is(errA, io.EOF) || errors.Is(errB, io.EOF) {
			if !errors.Is(errA, io.EOF) || !errors.Is(errB, io.EOF) {
				return nil, errors.New("the results have different numbers of rows")
			}
			return d, nil
		}
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("reading the results: %w", errors.Join(errA, errB))
		}
		d.Compared++
		ch := RowChange{Row: row, From: map[string]string{}, To: map[string]string{}}
		for _, n := range cols {
			va, vb := cell(x, ia, n), cell(y, ib, n)
			if va != vb {
				ch.From[n], ch.To[n] = va, vb
			}
		}
		if len(ch.From) == 0 {
			continue
		}
		d.Changed++
		if len(d.Rows) < MaxDifferenceRows {
			if in >= 0 && in < len(x) {
				ch.Input = x[in]
			}
			d.Rows = append(d.Rows, ch)
		}
	}
}
