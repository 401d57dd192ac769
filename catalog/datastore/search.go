package datastore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"toxgate/catalog/ckan"
)

// filterSQL builds " WHERE ..." from filters and q (nil for none); the bind
// parameters are numbered from start+1.
func (s *Store) filterSQL(t *table, filters map[string]any, q any, start int) (string, []any, error) {
	var conds []string
	var args []any
	next := func(v any) string {
		args = append(args, v)
		return s.d.ph(start + len(args))
	}
	nvals := 0
	for _, f := range sortedKeys(filters) {
		k, ok := t.field(f)
		if !ok {
			return "", nil, ckan.FieldError("filters", fmt.Sprintf("field %q not in table", f))
		}
		if k.array || k.base == "json" {
			return "", nil, ckan.FieldError("filters", fmt.Sprintf("field %q: filters on json and array fields are not supported", f))
		}
		vals, isList := filters[f].([]any)
		if !isList {
			vals = []any{filters[f]}
		}
		if nvals += len(vals); s.lim.MaxFilterValues > 0 && nvals > s.lim.MaxFilterValues {
			return "", nil, ckan.FieldError("filters", fmt.Sprintf("too many filter values: more than %d (datastore.max_filter_values)", s.lim.MaxFilterValues))
		}
		var in []string
		hasNull := false
		for _, v := range vals {
			c, err := coerce(k, v)
			if err != nil {
				return "", nil, ckan.FieldError("filters", fmt.Sprintf("field %q: %v", f, err))
			}
			if c == nil {
				hasNull = true
				continue
			}
			in = append(in, next(s.d.encode(k, c)))
		}
		var parts []string
		if len(in) == 1 {
			parts = append(parts, quote(f)+" = "+in[0])
		} else if len(in) > 1 {
			parts = append(parts, quote(f)+" IN ("+strings.Join(in, ", ")+")")
		}
		if hasNull {
			parts = append(parts, quote(f)+" IS NULL")
		}
		if len(parts) == 0 {
			parts = []string{"1 = 0"}
		}
		conds = append(conds, "("+strings.Join(parts, " OR ")+")")
	}
	if q != nil {
		q = decodeJSONString(q)
		var terms []qTerm
		switch x := q.(type) {
		case string:
			if strings.TrimSpace(x) != "" {
				terms = append(terms, qTerm{"", x})
			}
		case map[string]any:
			for _, f := range sortedKeys(x) {
				if _, ok := t.field(f); !ok {
					return "", nil, ckan.FieldError("q", fmt.Sprintf("field %q not in table", f))
				}
				text, ok := x[f].(string)
				if !ok {
					return "", nil, ckan.FieldError("q", fmt.Sprintf("value for field %q is not a string", f))
				}
				terms = append(terms, qTerm{f, text})
			}
		default:
			return "", nil, ckan.FieldError("q", "Not a string or dict")
		}
		words, err := s.qWords(terms)
		if err != nil {
			return "", nil, err
		}
		for _, w := range words {
			cols := []string{w.field}
			if w.field == "" {
				cols = nil
				for _, f := range t.Fields {
					cols = append(cols, f.ID)
				}
			}
			pat := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w.text) + "%"
			var ors []string
			for _, c := range cols {
				ors = append(ors, s.d.asText(c)+" LIKE "+next(pat)+` ESCAPE '\'`)
			}
			if len(ors) == 0 {
				ors = []string{"1 = 0"}
			}
			conds = append(conds, "("+strings.Join(ors, " OR ")+")")
		}
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// qTerm is a text of q and the field it searches ("" every field).
type qTerm struct{ field, text string }

// qWords splits q's texts into the words each must match, without
// repeats, within datastore.max_q_bytes and datastore.max_q_words.
func (s *Store) qWords(terms []qTerm) ([]qTerm, error) {
	size := 0
	for _, t := range terms {
		size += len(t.text)
	}
	if s.lim.MaxQBytes > 0 && size > s.lim.MaxQBytes {
		return nil, ckan.FieldError("q", fmt.Sprintf("the search text is %d bytes long, at most %d (datastore.max_q_bytes)", size, s.lim.MaxQBytes))
	}
	seen := map[qTerm]bool{}
	var out []qTerm
	for _, t := range terms {
		for _, word := range strings.Fields(strings.ToLower(t.text)) {
			word = strings.Trim(word, `&|!():*'"`)
			w := qTerm{t.field, word}
			if word == "" || seen[w] {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	if s.lim.MaxQWords > 0 && len(out) > s.lim.MaxQWords {
		return nil, ckan.FieldError("q", fmt.Sprintf("too many words: %d different ones, at most %d (datastore.max_q_words)", len(out), s.lim.MaxQWords))
	}
	return out, nil
}

var sortRe = regexp.MustCompile(`(?i)^\s*("(?:[^"]|"")+"|[^\s"]+)\s*(asc|desc)?\s*(nulls\s+(?:first|last))?\s*$`)

// orderSQL validates CKAN's sort ("a desc, b" or a list of those).
func (s *Store) orderSQL(t *table, data map[string]any) (string, error) {
	v, ok := data["sort"]
	if !ok || v == nil || v == "" {
		return "", nil
	}
	var parts []string
	switch x := decodeJSONString(v).(type) {
	case string:
		parts = strings.Split(x, ",")
	case []any:
		for _, e := range x {
			str, ok := e.(string)
			if !ok {
				return "", ckan.FieldError("sort", "Not a string")
			}
			parts = append(parts, str)
		}
	default:
		return "", ckan.FieldError("sort", "Not a string")
	}
	if len(parts) > len(t.Fields)+1 {
		return "", ckan.FieldError("sort", fmt.Sprintf("too many sort terms: %d, the table has %d fields and _id", len(parts), len(t.Fields)))
	}
	var out []string
	for _, p := range parts {
		m := sortRe.FindStringSubmatch(p)
		if m == nil {
			return "", ckan.FieldError("sort", fmt.Sprintf("cannot sort by %q", strings.TrimSpace(p)))
		}
		name := m[1]
		if strings.HasPrefix(name, `"`) {
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		}
		if _, ok := t.field(name); !ok {
			return "", ckan.FieldError("sort", fmt.Sprintf("field %q not in table", name))
		}
		term := quote(name)
		if m[2] != "" {
			term += " " + strings.ToUpper(m[2])
		}
		if m[3] != "" {
			term += " " + strings.ToUpper(strings.Join(strings.Fields(m[3]), " "))
		}
		out = append(out, term)
	}
	return strings.Join(out, ", "), nil
}

// orderedRecord is a record whose JSON keeps the column order.
type orderedRecord struct {
	keys []string
	vals []any
}

func (r orderedRecord) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(r.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// searchEcho are the parameters datastore_search returns as given.
var searchEcho = []string{"filters", "q", "sort", "distinct", "plain", "language", "offset"}

// Search is datastore_search. It runs within datastore.sql_timeout on a
// read connection with the read limits (readconn.go).
func (s *Store) Search(ctx context.Context, id string, data map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.lim.SQLTimeout)
	defer cancel()
	conn, err := s.readConn(ctx)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	defer conn.Close()
	t, err := s.loadTable(ctx, conn, id)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	if t == nil {
		return nil, notFound(id)
	}
	limit, cerr := ckan.Natural(data, "limit", 100)
	if cerr != nil {
		return nil, cerr
	}
	if limit > s.lim.RowsMax {
		limit = s.lim.RowsMax
	}
	offset, cerr := ckan.Natural(data, "offset", 0)
	if cerr != nil {
		return nil, cerr
	}
	includeTotal, err := boolParam(data, "include_total", true)
	if err != nil {
		return nil, err
	}
	distinct, err := boolParam(data, "distinct", false)
	if err != nil {
		return nil, err
	}
	if _, err := boolParam(data, "plain", true); err != nil {
		return nil, err
	}
	format, _ := data["records_format"].(string)
	if format == "" {
		format = "objects"
	}
	if format != "objects" && format != "lists" && format != "csv" && format != "tsv" {
		return nil, ckan.FieldError("records_format", "Value must be one of ['objects', 'lists', 'csv', 'tsv']")
	}
	threshold := -1
	if v, ok := data["total_estimation_threshold"]; ok && v != nil && v != "" {
		n, msg := ckan.AsInt(v)
		if msg != "" {
			return nil, ckan.FieldError("total_estimation_threshold", msg)
		}
		threshold = n
	}
	names, err := stringList(data, "fields")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		names = append(names, "_id")
		for _, f := range t.Fields {
			names = append(names, f.ID)
		}
	}
	if len(names) > len(t.Fields)+1 {
		return nil, ckan.FieldError("fields", fmt.Sprintf("too many fields: %d, the table has %d fields and _id", len(names), len(t.Fields)))
	}
	fieldsOut := make([]map[string]any, len(names))
	sel := make([]string, len(names))
	kinds := make([]kind, len(names))
	for i, n := range names {
		k, ok := t.field(n)
		if !ok {
			return nil, ckan.FieldError("fields", fmt.Sprintf("field %q not in table", n))
		}
		kinds[i], sel[i] = k, s.d.selectColumn(n, k)
		fo := map[string]any{"id": n, "type": "int"}
		if n != "_id" {
			for _, f := range t.Fields {
				if f.ID == n {
					fo["type"] = f.Type
					if f.Info != nil {
						fo["info"] = f.Info
					}
				}
			}
		}
		fieldsOut[i] = fo
	}
	filters, _, err := dict(data, "filters")
	if err != nil {
		return nil, err
	}
	where, args, err := s.filterSQL(t, filters, data["q"], 0)
	if err != nil {
		return nil, err
	}
	order, err := s.orderSQL(t, data)
	if err != nil {
		return nil, err
	}
	if order == "" {
		if distinct {
			order = quoteList(names)
		} else {
			order = `"_id"`
		}
	}
	from := quote(id) + where
	if distinct {
		// distinct rows of the raw columns; read expressions apply outside
		from = "(SELECT DISTINCT " + quoteList(names) + " FROM " + quote(id) + where + ") AS d"
	}
	query := "SELECT " + strings.Join(sel, ", ") + " FROM " + from + " ORDER BY " + order +
		" LIMIT " + strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset)
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	defer rows.Close()
	records, err := s.scanRecords(ctx, rows, names, kinds, "; ask for fewer rows (limit) or fields")
	if err != nil {
		return nil, err
	}
	rows.Close()
	out := map[string]any{"resource_id": id, "fields": fieldsOut, "limit": limit, "include_total": includeTotal,
		"records_format": format, "total_estimation_threshold": nil}
	for _, k := range searchEcho {
		if v, ok := data[k]; ok {
			out[k] = v
		}
	}
	if threshold >= 0 {
		out["total_estimation_threshold"] = threshold
	}
	switch format {
	case "objects":
		if records == nil {
			records = []orderedRecord{}
		}
		out["records"] = records
	case "lists":
		lists := make([][]any, len(records))
		for i, r := range records {
			lists[i] = r.vals
		}
		out["records"] = lists
	default:
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if format == "tsv" {
			w.Comma = '\t'
		}
		for _, r := range records {
			cells := make([]string, len(r.vals))
			for i, v := range r.vals {
				cells[i] = cellText(v)
			}
			_ = w.Write(cells)
		}
		w.Flush()
		out["records"] = b.String()
	}
	if includeTotal {
		total, estimated, err := s.total(ctx, conn, t, where, args, distinct, names, threshold, len(filters) == 0 && data["q"] == nil)
		if err != nil {
			return nil, err
		}
		out["total"], out["total_was_estimated"] = total, estimated
	}
	out["_links"] = links(id, data, offset, limit)
	return out, nil
}

// cellText renders a value for csv/tsv records.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		return string(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// total counts the matching rows; with a threshold and no filters it may
// use the engine's estimate (PostgreSQL's planner statistics).
func (s *Store) total(ctx context.Context, conn *readConn, t *table, where string, args []any, distinct bool, names []string, threshold int, unfiltered bool) (int64, bool, error) {
	if threshold >= 0 && unfiltered && !distinct && s.d.pg() {
		var est float64
		if err := conn.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)`, quote(t.ID)).Scan(&est); err == nil && est > float64(threshold) {
			return int64(est), true, nil
		}
	}
	q := "SELECT COUNT(*) FROM " + quote(t.ID) + where
	if distinct {
		q = "SELECT COUNT(*) FROM (SELECT DISTINCT " + quoteList(names) + " FROM " + quote(t.ID) + where + ") AS d"
	}
	var n int64
	if err := conn.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, false, s.queryError(ctx, err)
	}
	return n, false, nil
}

// links are CKAN's _links: the same search from the start and the next page.
func links(id string, data map[string]any, offset, limit int) map[string]any {
	v := url.Values{}
	for k, val := range data {
		if k == "offset" || val == nil {
			continue
		}
		switch x := val.(type) {
		case string:
			v.Set(k, x)
		case json.Number:
			v.Set(k, x.String())
		case bool:
			v.Set(k, strconv.FormatBool(x))
		default:
			b, _ := json.Marshal(x)
			v.Set(k, string(b))
		}
	}
	v.Set("resource_id", id)
	start := "/api/action/datastore_search?" + v.Encode()
	v.Set("offset", strconv.Itoa(offset+limit))
	return map[string]any{"start": start, "next": "/api/action/datastore_search?" + v.Encode()}
}

// queryError turns an engine error of a datastore_search read into CKAN's
// error: a limit's, else an internal failure.
func (s *Store) queryError(ctx context.Context, err error) error {
	if le := s.limitError(ctx, err); le != nil {
		return le
	}
	var ce *ckan.Error
	if errors.As(err, &ce) {
		return ce
	}
	return fmt.Errorf("datastore: search: %w", err)
}

func isTimeout(err error) bool {
	m := err.Error()
	return strings.Contains(m, "statement timeout") || strings.Contains(m, "interrupted") || strings.Contains(m, "context deadline exceeded") || strings.Contains(m, "57014")
}

// Info is datastore_info: the table's fields and row count, within
// datastore.sql_timeout.
func (s *Store) Info(ctx context.Context, id string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.lim.SQLTimeout)
	defer cancel()
	t, err := s.loadTable(ctx, s.rd, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, notFound(id)
	}
	var count int64
	if err := s.rd.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quote(id)).Scan(&count); err != nil {
		return nil, s.queryError(ctx, err)
	}
	unique := map[string]bool{}
	for _, k := range t.PrimaryKey {
		unique[k] = true
	}
	indexed := map[string]bool{}
	for _, k := range t.Indexes {
		indexed[k] = true
	}
	fields := make([]map[string]any, 0, len(t.Fields))
	for _, f := range t.Fields {
		k := t.kinds[f.ID]
		fd := map[string]any{"id": f.ID, "type": f.Type, "schema": map[string]any{
			"native_type": s.d.columnType(k), "notnull": false, "is_index": indexed[f.ID] || unique[f.ID], "uniquekey": unique[f.ID] && len(t.PrimaryKey) == 1,
		}}
		if f.Info != nil {
			fd["info"] = f.Info
		}
		fields = append(fields, fd)
	}
	pk := nonNil(t.PrimaryKey)
	return map[string]any{
		"meta":   map[string]any{"count": count, "table_type": "BASE TABLE", "aliases": []string{}, "size": t.Bytes, "engine": s.d.name},
		"fields": fields, "primary_key": pk,
	}, nil
}

// scanRecords reads every row of rows as a record of the named fields
// (decoded by kind) within the result budget; past it, a 409 on limit whose
// message ends with hint.
func (s *Store) scanRecords(ctx context.Context, rows *sql.Rows, names []string, kinds []kind, hint string) ([]orderedRecord, error) {
	var records []orderedRecord
	raw := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	budget := s.resultBudget()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.queryError(ctx, err)
		}
		if err := budget.take(names, raw); err != nil {
			return nil, ckan.FieldError("limit", err.Error()+hint)
		}
		vals := make([]any, len(names))
		for i := range raw {
			var err error
			if vals[i], err = decode(kinds[i], raw[i]); err != nil {
				return nil, fmt.Errorf("datastore: field %s: %w", names[i], err)
			}
		}
		records = append(records, orderedRecord{keys: names, vals: vals})
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(ctx, err)
	}
	return records, nil
}
