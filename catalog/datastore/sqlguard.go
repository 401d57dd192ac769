package datastore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"toxgate/catalog/ckan"
)

// datastore_search_sql follows CKAN's rules: one statement, a SELECT, on
// DataStore tables the caller may read, calling only allowed functions, in
// a read-only transaction with a time limit. The check does not parse SQL:
// it asks the engine for the query's plan (EXPLAIN), as CKAN does, and
// checks every table and function the plan touches. Then the query runs on
// a connection that cannot write.

// allowedFunctions are the functions a query may call (lower case), on
// both engines: arithmetic, text, date and aggregate functions that read
// nothing but their arguments. Anything else (file access, other tables,
// settings, sleeps, large allocations) is refused.
var allowedFunctions = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`
abs ceil ceiling floor round trunc sign sqrt cbrt exp ln log log10 power pow mod div pi degrees radians
sin cos tan asin acos atan atan2 sinh cosh tanh greatest least width_bucket
upper lower length char_length character_length octet_length substr substring trim ltrim rtrim btrim
replace instr strpos position concat concat_ws left right lpad rpad initcap reverse split_part
starts_with translate regexp_replace regexp_match regexp_matches unicode chr ascii like glob
coalesce ifnull nullif iif
count sum avg min max total group_concat string_agg array_agg bool_and bool_or every stddev stddev_pop
stddev_samp variance var_pop var_samp percentile_cont percentile_disc mode median corr covar_pop covar_samp
regr_slope regr_intercept
date datetime julianday strftime unixepoch date_trunc date_part extract to_char to_date to_timestamp
age make_date make_timestamp justify_days
json_extract json_array_length json_type json_valid jsonb_extract_path json_extract_path
json_extract_path_text jsonb_extract_path_text json_array_elements_text to_json row_to_json json_build_object
json_agg json_object_agg json_typeof jsonb_typeof array_length array_to_string unnest cardinality
typeof cast numeric_inc numeric_avg
int4 int8 float8 numeric text bool float48div float8div int4div int8div
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value`) {
		allowedFunctions[f] = true
	}
}

// SQLAccess decides whether the caller may read a resource's table: nil,
// or the CKAN error to return.
type SQLAccess func(resourceID string) error

// SearchSQL is datastore_search_sql, called by user ("" anonymous). The
// statement is read as the engine reads it (one statement that starts as
// a SELECT), the caller's calls at once are bounded, and it runs on a read
// connection with the read limits (readconn.go) after the plan check.
func (s *Store) SearchSQL(ctx context.Context, data map[string]any, user string, canRead SQLAccess) (map[string]any, error) {
	query, _ := data["sql"].(string)
	if strings.TrimSpace(query) == "" {
		return nil, ckan.FieldError("sql", ckan.MsgMissing)
	}
	if s.lim.SQLMaxLength > 0 && len(query) > s.lim.SQLMaxLength {
		return nil, ckan.FieldError("sql", fmt.Sprintf("the statement is %d bytes long, at most %d (datastore.sql_max_length)", len(query), s.lim.SQLMaxLength))
	}
	stmt, first, ok := scanStatement(query, s.d.pg())
	if !ok {
		return nil, notSingle()
	}
	if !selectKeywords[first] {
		return nil, ckan.NotAuthorized("Only SELECT statements are allowed")
	}
	release, err := s.calls.acquire(user)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.lim.SQLTimeout)
	defer cancel()
	conn, err := s.readConn(ctx)
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	defer conn.Close()
	if !s.d.pg() {
		// modernc.org/sqlite runs every statement of a string: SQLite's own
		// parser must find exactly one
		if err := sqliteSingleStatement(conn.db, stmt); errors.Is(err, errNotSingle) {
			return nil, notSingle()
		} else if err != nil {
			return nil, ckan.Validation(map[string]any{"query": []string{err.Error()}})
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.d.pg()})
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if s.d.pg() {
		if err := s.pgReadLimits(ctx, tx); err != nil {
			return nil, s.readError(ctx, err)
		}
	}
	var tables []string
	if s.d.pg() {
		tables, err = s.checkPlanPG(ctx, tx, stmt)
	} else {
		tables, err = s.checkPlanSQLite(ctx, tx, stmt)
	}
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		if err := canRead(t); err != nil {
			return nil, err
		}
	}
	rows, err := tx.QueryContext(ctx, stmt)
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	names := make([]string, len(cols))
	types := make([]string, len(cols))
	kinds := make([]*kind, len(cols))
	for i, c := range cols {
		names[i] = c.Name()
		dt := normalizeDBType(c.DatabaseTypeName())
		if k, ok := parseType(dt); ok && c.DatabaseTypeName() != "" {
			kk := k
			kinds[i] = &kk
			types[i] = dt
		}
	}
	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	records := []orderedRecord{}
	truncated := false
	budget := s.resultBudget()
	for rows.Next() {
		if len(records) >= s.lim.RowsMax {
			truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, s.readError(ctx, err)
		}
		vals := make([]any, len(cols))
		for i, v := range raw {
			if kinds[i] != nil {
				if vals[i], err = decode(*kinds[i], v); err != nil {
					vals[i] = decodeAny(v)
				}
			} else {
				vals[i] = decodeAny(v)
				if types[i] == "" && v != nil {
					types[i] = typeOfValue(v)
				}
			}
		}
		if err := budget.take(names, raw); err != nil {
			return nil, ckan.Validation(map[string]any{"query": []string{err.Error() + "; select fewer rows or columns"}})
		}
		records = append(records, orderedRecord{keys: names, vals: vals})
	}
	if err := rows.Err(); err != nil {
		return nil, s.readError(ctx, err)
	}
	fields := make([]map[string]any, len(cols))
	for i := range cols {
		if types[i] == "" {
			types[i] = "text"
		}
		fields[i] = map[string]any{"id": names[i], "type": types[i]}
	}
	out := map[string]any{"sql": query, "fields": fields, "records": records}
	if truncated {
		out["records_truncated"] = true
	}
	return out, nil
}

func notSingle() error {
	return ckan.Validation(map[string]any{"query": []string{"Query is not a single statement."}})
}

// engineMessage is an engine error without driver decoration.
func engineMessage(err error) string {
	m := err.Error()
	m = strings.TrimPrefix(m, "ERROR: ")
	if i := strings.Index(m, " (SQLSTATE"); i > 0 {
		m = m[:i]
	}
	return m
}

// checkPlanSQLite reads the query's bytecode: every table opened must be a
// DataStore table of the main database, no virtual table may be opened,
// nothing may be written, and every function called must be allowed.
func (s *Store) checkPlanSQLite(ctx context.Context, tx *sql.Tx, q string) ([]string, error) {
	roots := map[int64]string{}
	rows, err := tx.QueryContext(ctx, `SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0`)
	if err != nil {
		return nil, fmt.Errorf("datastore: read schema: %w", err)
	}
	for rows.Next() {
		var root int64
		var name string
		if err := rows.Scan(&root, &name); err != nil {
			rows.Close()
			return nil, err
		}
		roots[root] = name
	}
	rows.Close()
	rows, err = tx.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return nil, s.readError(ctx, err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	var tables []string
	for rows.Next() {
		var addr, p1, p2, p3 int64
		var opcode string
		var p4, p5, comment sql.NullString
		if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			return nil, fmt.Errorf("datastore: read plan: %w", err)
		}
		switch opcode {
		case "OpenRead", "ReopenIdx":
			name := roots[p2]
			if p3 != 0 || name == "" || isSystemTable(name) {
				return nil, systemTables()
			}
			if !seen[name] {
				seen[name] = true
				tables = append(tables, name)
			}
		case "OpenWrite", "VOpen", "VFilter", "VUpdate", "Destroy", "Clear", "CreateBtree", "ParseSchema", "DropTable", "VBegin", "VCreate", "VDestroy", "Transaction", "AutoCommit", "Expire", "SqlExec", "LoadAnalysis":
			if opcode == "Transaction" && p2 == 0 && p1 == 0 {
				continue // a read transaction on the main database
			}
			if strings.HasPrefix(opcode, "V") {
				return nil, systemTables()
			}
			return nil, ckan.NotAuthorized("Only SELECT statements on DataStore tables are allowed")
		case "Function", "PureFunc", "AggStep", "AggFinal", "AggValue", "AggInverse", "AggStep1":
			name := strings.ToLower(p4.String)
			if i := strings.IndexByte(name, '('); i >= 0 {
				name = name[:i]
			}
			if !allowedFunctions[name] {
				return nil, ckan.NotAuthorized(fmt.Sprintf("Not authorized to call function %s", name))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.readError(ctx, err)
	}
	for _, t := range tables {
		ok, err := s.isDataStoreTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, systemTables()
		}
	}
	return tables, nil
}

func systemTables() error { return ckan.NotAuthorized("Not authorized to access system tables") }

func isSystemTable(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "sqlite_") || strings.HasPrefix(n, "pg_") || strings.HasPrefix(n, "_datastore")
}

func (s *Store) isDataStoreTable(ctx context.Context, q querier, name string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+tablesTable+" WHERE id = "+s.d.ph(1), name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// funcCall finds function calls in PostgreSQL's printed expressions
// (string literals are removed first).
var (
	funcCall   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?)\s*\(`)
	pgLiteral  = regexp.MustCompile(`'(?:[^']|'')*'`)
	pgQuoted   = regexp.MustCompile(`"(?:[^"]|"")*"`)
	exprKeywrd = map[string]bool{"case": true, "when": true, "then": true, "else": true, "and": true, "or": true, "not": true, "in": true,
		"any": true, "all": true, "array": true, "row": true, "exists": true, "coalesce": true, "nullif": true, "greatest": true, "least": true,
		"subplan": true, "initplan": true, "hashed": true, "filter": true, "over": true, "partition": true, "is": true, "distinct": true, "from": true,
		"between": true, "like": true, "ilike": true, "similar": true, "to": true, "escape": true, "some": true, "cast": true, "using": true, "on": true, "as": true, "where": true, "rows": true}
)

// checkPlanPG reads EXPLAIN (VERBOSE, FORMAT JSON): every relation must be
// a DataStore table in the current schema, the plan may only select, and
// every function named in the plan must be allowed.
func (s *Store) checkPlanPG(ctx context.Context, tx *sql.Tx, q string) ([]string, error) {
	var plan string
	if err := tx.QueryRowContext(ctx, "EXPLAIN (VERBOSE, FORMAT JSON) "+q).Scan(&plan); err != nil {
		return nil, s.readError(ctx, err)
	}
	var doc any
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		return nil, fmt.Errorf("datastore: read plan: %w", err)
	}
	var schema string
	if err := tx.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return nil, fmt.Errorf("datastore: current schema: %w", err)
	}
	seen := map[string]bool{}
	var tables []string
	var walkErr error
	var walk func(v any)
	walk = func(v any) {
		if walkErr != nil {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if nt, _ := x["Node Type"].(string); nt == "ModifyTable" || nt == "LockRows" {
				walkErr = ckan.NotAuthorized("Only SELECT statements on DataStore tables are allowed")
				return
			}
			if rel, ok := x["Relation Name"].(string); ok {
				if sc, _ := x["Schema"].(string); sc != schema || isSystemTable(rel) {
					walkErr = systemTables()
					return
				}
				if !seen[rel] {
					seen[rel] = true
					tables = append(tables, rel)
				}
			}
			if fn, ok := x["Function Name"].(string); ok && !allowedFunctions[strings.ToLower(fn)] {
				walkErr = ckan.NotAuthorized(fmt.Sprintf("Not authorized to call function %s", fn))
				return
			}
			if nt, _ := x["Node Type"].(string); nt != "" && nt != "Result" && nt != "Seq Scan" && nt != "Index Scan" &&
				nt != "Index Only Scan" && nt != "Bitmap Heap Scan" && nt != "Bitmap Index Scan" && nt != "Function Scan" &&
				nt != "Sort" && nt != "Incremental Sort" && nt != "Aggregate" && nt != "Limit" && nt != "Hash" && nt != "Hash Join" &&
				nt != "Nested Loop" && nt != "Merge Join" && nt != "Subquery Scan" && nt != "Unique" && nt != "Append" &&
				nt != "Materialize" && nt != "Memoize" && nt != "WindowAgg" && nt != "Group" && nt != "Values Scan" &&
				nt != "CTE Scan" && nt != "SetOp" && nt != "HashSetOp" && nt != "Gather" && nt != "Gather Merge" && nt != "BitmapAnd" &&
				nt != "BitmapOr" && nt != "ProjectSet" && nt != "Merge Append" && nt != "WorkTable Scan" && nt != "Recursive Union" {
				walkErr = ckan.NotAuthorized(fmt.Sprintf("Not authorized to run a query with a %s step", nt))
				return
			}
			for k, e := range x {
				switch k {
				case "Relation Name", "Schema", "Alias", "Node Type", "Function Name", "Parent Relationship", "Strategy",
					"Partial Mode", "Join Type", "Scan Direction", "Index Name", "Sort Method", "Command", "Subplan Name", "CTE Name":
					continue
				}
				switch ev := e.(type) {
				case string:
					if err := checkPGExpr(ev); err != nil {
						walkErr = err
						return
					}
				case []any:
					for _, item := range ev {
						if str, ok := item.(string); ok {
							if err := checkPGExpr(str); err != nil {
								walkErr = err
								return
							}
						} else {
							walk(item)
						}
					}
				default:
					walk(e)
				}
			}
		}
	}
	walk(doc)
	if walkErr != nil {
		return nil, walkErr
	}
	for _, t := range tables {
		ok, err := s.isDataStoreTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, systemTables()
		}
	}
	return tables, nil
}

// checkPGExpr refuses an expression that calls a function not allowed.
func checkPGExpr(e string) error {
	e = pgQuoted.ReplaceAllString(pgLiteral.ReplaceAllString(e, "''"), `"x"`)
	for _, m := range funcCall.FindAllStringSubmatch(e, -1) {
		name := strings.ToLower(m[1])
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			if name[:i] != "pg_catalog" {
				return ckan.NotAuthorized(fmt.Sprintf("Not authorized to call function %s", name))
			}
			name = name[i+1:]
		}
		if exprKeywrd[name] || allowedFunctions[name] {
			continue
		}
		return ckan.NotAuthorized(fmt.Sprintf("Not authorized to call function %s", name))
	}
	return nil
}
