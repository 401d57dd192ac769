package datastore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dialect holds every difference between the two engines. The rest of the
// package builds the same SQL for both; README.md lists these differences.
type dialect struct {
	// name is "sqlite" or "postgres".
	name string
}

var (
	sqliteDialect   = &dialect{name: "sqlite"}
	postgresDialect = &dialect{name: "postgres"}
)

func (d *dialect) pg() bool { return d.name == "postgres" }

// ph is the n-th (1-based) bind parameter.
func (d *dialect) ph(n int) string {
	if d.pg() {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// quote quotes an identifier the standard way (both engines).
func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// idColumn is the definition of CKAN's _id column.
func (d *dialect) idColumn() string {
	if d.pg() {
		return `"_id" bigserial PRIMARY KEY`
	}
	// INTEGER PRIMARY KEY is the rowid; AUTOINCREMENT never reuses an id
	return `"_id" INTEGER PRIMARY KEY AUTOINCREMENT`
}

// columnType is the declared SQL type of a column. PostgreSQL keeps json
// as jsonb, which can be compared and sorted (distinct, sort). SQLite
// declares the CKAN
// name itself (its type affinity rules give int* INTEGER, float8 REAL,
// text and arrays TEXT, the rest NUMERIC), so that datastore_search_sql
// reports the same type names on both engines.
func (d *dialect) columnType(k kind) string {
	if !d.pg() {
		if k.array {
			return "_" + k.base
		}
		return k.base
	}
	t := map[string]string{"text": "text", "int4": "int4", "int8": "int8", "float8": "float8", "numeric": "numeric",
		"bool": "boolean", "date": "date", "timestamp": "timestamp", "json": "jsonb"}[k.base]
	if k.array {
		return t + "[]"
	}
	return t
}

// encode turns a coerced value into what the driver binds.
func (d *dialect) encode(k kind, v any) any {
	if v == nil {
		return nil
	}
	if k.array {
		list := v.([]any)
		if !d.pg() {
			out := make([]any, len(list))
			for i, e := range list {
				out[i] = plainJSON(kind{base: k.base}, e)
			}
			b, _ := json.Marshal(out)
			return string(b)
		}
		return pgArray(k.base, list)
	}
	switch x := v.(type) {
	case jsonText:
		return string(x)
	case bool:
		if !d.pg() {
			if x {
				return int64(1)
			}
			return int64(0)
		}
	case time.Time:
		if !d.pg() {
			if k.base == "date" {
				return x.Format("2006-01-02")
			}
			return x.Format("2006-01-02T15:04:05.999999")
		}
	}
	return v
}

// plainJSON is a coerced array element as it is kept in SQLite's JSON text.
func plainJSON(k kind, v any) any {
	if t, ok := v.(time.Time); ok {
		return formatTime(k.base, t)
	}
	if j, ok := v.(jsonText); ok {
		return json.RawMessage(j)
	}
	return v
}

// pgArray is a typed slice pgx encodes as a PostgreSQL array.
func pgArray(base string, list []any) any {
	switch base {
	case "int4", "int8":
		out := make([]*int64, len(list))
		for i, e := range list {
			if e != nil {
				n := e.(int64)
				out[i] = &n
			}
		}
		return out
	case "float8", "numeric":
		out := make([]*float64, len(list))
		for i, e := range list {
			if e != nil {
				f := e.(float64)
				out[i] = &f
			}
		}
		return out
	case "bool":
		out := make([]*bool, len(list))
		for i, e := range list {
			if e != nil {
				b := e.(bool)
				out[i] = &b
			}
		}
		return out
	case "date", "timestamp":
		out := make([]*time.Time, len(list))
		for i, e := range list {
			if e != nil {
				t := e.(time.Time)
				out[i] = &t
			}
		}
		return out
	}
	out := make([]*string, len(list))
	for i, e := range list {
		if e != nil {
			s := e.(string)
			out[i] = &s
		}
	}
	return out
}

// analyze is the statement that refreshes the planner's statistics of a
// table after a bulk change (PostgreSQL plans filters from them; SQLite
// needs none to use an index).
func (d *dialect) analyze(table string) string {
	if d.pg() {
		return "ANALYZE " + quote(table)
	}
	return ""
}

// selectColumn is the expression that reads a column back: PostgreSQL
// arrays are read as JSON (as SQLite keeps them).
func (d *dialect) selectColumn(name string, k kind) string {
	if d.pg() && k.array {
		return "to_json(" + quote(name) + ")"
	}
	return quote(name)
}

// asText is the expression of a column as text, for q matching.
func (d *dialect) asText(name string) string {
	return "lower(CAST(" + quote(name) + " AS TEXT))"
}

// decode turns what the driver read into the JSON value CKAN returns.
func decode(k kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if k.array || k.base == "json" {
		switch x := v.(type) {
		case string:
			if !json.Valid([]byte(x)) {
				return nil, fmt.Errorf("column holds invalid JSON")
			}
			return json.RawMessage(x), nil
		default:
			return x, nil
		}
	}
	switch k.base {
	case "int4", "int8":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case string:
			return strconv.ParseInt(x, 10, 64)
		}
	case "float8", "numeric":
		switch x := v.(type) {
		case int64, float64:
			return x, nil
		case string:
			if _, err := strconv.ParseFloat(x, 64); err != nil {
				return nil, err
			}
			return json.Number(x), nil
		}
	case "bool":
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case "date", "timestamp":
		switch x := v.(type) {
		case time.Time:
			return formatTime(k.base, x.UTC()), nil
		case string:
			if t, ok := parseTimestamp(x); ok {
				return formatTime(k.base, t), nil
			}
			return x, nil
		}
	case "text":
		switch x := v.(type) {
		case string:
			return x, nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case time.Time:
			return formatTime("timestamp", x), nil
		}
	}
	return v, nil
}

// decodeAny renders a value of an expression column (search_sql) by its
// Go type.
func decodeAny(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return formatTime("timestamp", x.UTC())
	}
	return v
}

// typeOfValue names the type of an expression column from a value.
func typeOfValue(v any) string {
	switch v.(type) {
	case int64:
		return "int8"
	case float64:
		return "float8"
	case bool:
		return "bool"
	case time.Time:
		return "timestamp"
	}
	return "text"
}

// normalizeDBType maps an engine's column type name to CKAN's.
func normalizeDBType(t string) string {
	t = strings.ToLower(t)
	switch t {
	case "integer", "int", "int4":
		return "int4"
	case "bigint", "int8", "bigserial":
		return "int8"
	case "boolean", "bool":
		return "bool"
	case "real", "double precision", "float8", "float4":
		return "float8"
	case "character varying", "varchar", "text", "":
		return "text"
	case "jsonb":
		return "json"
	}
	if strings.HasPrefix(t, "_") {
		return t
	}
	return t
}
