package catalog

import (
	"context"
	"sort"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
)

func init() {
	register("dataset_version_diff", true, "Differences between two versions of a dataset, or a version and now: metadata, files, tables (dataset, from, to, diff_type, limit).", datasetVersionDiff)
}

// Bounds of dataset_version_diff.
const (
	// DefaultDiffRows is the rows of each kind listed per table when the
	// call gives no limit; at most datastore.DiffRows.
	DefaultDiffRows = 100
	// MaxDiffTables is the most tables compared in one call; the others
	// are named in tables_not_compared.
	MaxDiffTables = 20
)

// diffSide is one side of a comparison: a version, or the dataset now.
type diffSide struct {
	version *Version
	pkg     ckan.RawJSON
	// files and tables by resource id (sha256 hex; table name)
	files, tables map[string]string
	order         []string
}

// DiffArgs are dataset_version_diff's arguments, parsed.
type DiffArgs struct {
	Dataset, From, To, DiffType string
	Limit                       int
}

// ParseDiffArgs reads dataset_version_diff's data dict: dataset and from
// required, to optional (the dataset now), diff_type unified (default),
// context or html, limit 0..datastore.DiffRows (default DefaultDiffRows).
func ParseDiffArgs(data map[string]any) (DiffArgs, error) {
	var a DiffArgs
	a.Dataset, _ = str(data["dataset"])
	if a.Dataset == "" {
		return a, ckan.FieldError("dataset", ckan.MsgMissing)
	}
	var cerr *ckan.Error
	if a.From, cerr = versionRef(data, "from"); cerr != nil {
		return a, cerr
	}
	if a.From == "" {
		return a, ckan.FieldError("from", ckan.MsgMissing)
	}
	if a.To, cerr = versionRef(data, "to"); cerr != nil {
		return a, cerr
	}
	a.DiffType, _ = str(data["diff_type"])
	switch a.DiffType {
	case "":
		a.DiffType = "unified"
	case "unified", "context", "html":
	default:
		return a, ckan.FieldError("diff_type", "diff_type not recognized")
	}
	n, err := ckan.Natural(data, "limit", DefaultDiffRows)
	if err != nil {
		return a, err
	}
	a.Limit = min(n, datastore.DiffRows)
	return a, nil
}

func datasetVersionDiff(ctx context.Context, s *Service, r *Request) (any, error) {
	a, err := ParseDiffArgs(r.Data)
	if err != nil {
		return nil, err
	}
	d := s.st.lookupDataset(a.Dataset)
	if d == nil {
		return nil, ckan.NotFound("Package was not found.")
	}
	from, err := s.versionSide(ctx, d.ID, a.From)
	if err != nil {
		return nil, err
	}
	var to *diffSide
	if a.To != "" {
		to, err = s.versionSide(ctx, d.ID, a.To)
	} else {
		to, err = s.nowSide(ctx, d.ID, r.SiteURL)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{"from": versionDict(from.version), "to": nil}
	if to.version != nil {
		out["to"] = versionDict(to.version)
	}
	// metadata, as activity_diff compares package dicts
	var lines [2][]string
	for i, side := range []*diffSide{from, to} {
		if lines[i], err = pythonIndent(side.pkg); err != nil {
			return nil, err
		}
	}
	switch a.DiffType {
	case "unified":
		out["metadata"] = unifiedDiff(lines[0], lines[1])
	case "context":
		out["metadata"] = contextDiff(lines[0], lines[1])
	default:
		out["metadata"] = htmlDiff(lines[0], lines[1])
	}
	out["files"] = fileDiff(from, to)
	if s.ds != nil {
		tables, skipped, err := s.tableDiffs(ctx, from, to, a.Limit)
		if err != nil {
			return nil, err
		}
		out["tables"], out["tables_not_compared"] = tables, skipped
	}
	return out, nil
}

// versionSide is version ref of dataset id as a side.
func (s *Service) versionSide(ctx context.Context, id, ref string) (*diffSide, error) {
	v, err := s.findVersion(ctx, id, "", ref)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, versionNotFound()
	}
	side := &diffSide{version: v, pkg: ckan.RawJSON(v.Package), files: map[string]string{}, tables: map[string]string{}}
	for _, r := range v.Resources {
		side.order = append(side.order, r.ID)
		if r.FileID != "" {
			side.files[r.ID] = r.SHA256
		}
		if r.Table != "" {
			side.tables[r.ID] = r.Table
		}
	}
	return side, nil
}

// nowSide is dataset id as it is now.
func (s *Service) nowSide(ctx context.Context, id, siteURL string) (*diffSide, error) {
	side := &diffSide{files: map[string]string{}, tables: map[string]string{}}
	var res []Resource
	raw, err := viewed2(s.st, func() (ckan.RawJSON, error) {
		d := s.st.datasets[id]
		if d == nil {
			return nil, ckan.NotFound("Package was not found.")
		}
		res = d.Resources
		return s.st.datasetJSON(d, siteURL)
	})
	if err != nil {
		return nil, err
	}
	side.pkg = raw
	for _, r := range res {
		if r.State == StateDeleted {
			continue
		}
		side.order = append(side.order, r.ID)
		if r.FileID != "" {
			side.files[r.ID] = strings.TrimPrefix(r.Hash, "sha256:")
		}
		if s.ds != nil {
			has, err := s.ds.HasTable(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			if has {
				side.tables[r.ID] = r.ID
			}
		}
	}
	return side, nil
}

// fileDiff compares the files of two sides by resource and hash.
func fileDiff(from, to *diffSide) map[string]any {
	added, removed, changed := []map[string]any{}, []map[string]any{}, []map[string]any{}
	for _, id := range to.order {
		h, ok := to.files[id]
		if !ok {
			continue
		}
		old, had := from.files[id]
		switch {
		case !had:
			added = append(added, map[string]any{"resource_id": id, "sha256": h})
		case old != h:
			changed = append(changed, map[string]any{"resource_id": id, "from": old, "to": h})
		}
	}
	for _, id := range from.order {
		if h, ok := from.files[id]; ok {
			if _, still := to.files[id]; !still {
				removed = append(removed, map[string]any{"resource_id": id, "sha256": h})
			}
		}
	}
	return map[string]any{"added": added, "removed": removed, "changed": changed}
}

// tableDiffs compares the tables of two sides, resource by resource (at
// most MaxDiffTables; the others are listed as not compared).
func (s *Service) tableDiffs(ctx context.Context, from, to *diffSide, limit int) (map[string]any, []string, error) {
	ids := map[string]bool{}
	for id := range from.tables {
		ids[id] = true
	}
	for id := range to.tables {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	out := map[string]any{}
	skipped := []string{}
	for _, id := range sorted {
		if len(out) >= MaxDiffTables {
			skipped = append(skipped, id)
			continue
		}
		d, err := s.ds.Diff(ctx, from.tables[id], to.tables[id], limit)
		if err != nil {
			return nil, nil, err
		}
		out[id] = d
	}
	return out, skipped, nil
}
