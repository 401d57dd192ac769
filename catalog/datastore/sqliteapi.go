package datastore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The embedded engine's limits that database/sql has no word for are set
// through SQLite's C API as modernc.org/sqlite builds it
// (modernc.org/sqlite/lib): the process's heap limit, a connection's
// interrupt and its parser. RATIONALE.md says why.

var (
	memstatusOnce sync.Once
	memstatusErr  error
)

// setSQLiteHeapLimit turns SQLite's memory accounting on (modernc.org/sqlite
// builds it off, SQLITE_DEFAULT_MEMSTATUS=0, and without it no heap limit
// is enforced) and sets the hard heap limit of the process to limit and the
// soft one to half of it. The accounting can only be turned on before the
// process's first SQLite connection; later it reports an error and the
// limit is not enforced.
func setSQLiteHeapLimit(limit int64) error {
	memstatusOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		va := libc.NewVaList(int32(1))
		if va == 0 {
			memstatusErr = errors.New("cannot allocate the argument list")
			return
		}
		rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MEMSTATUS, va)
		libc.Xfree(tls, va)
		if rc != sqlite3.SQLITE_OK {
			memstatusErr = fmt.Errorf("SQLite is already in use in this process (sqlite3_config: %d)", rc)
		}
	})
	if memstatusErr != nil {
		return memstatusErr
	}
	tls := libc.NewTLS()
	defer tls.Close()
	sqlite3.Xsqlite3_hard_heap_limit64(tls, limit)
	sqlite3.Xsqlite3_soft_heap_limit64(tls, limit/2)
	return nil
}

// sqliteLimits applies a read connection's limit on the longest string,
// blob or row it may build (SQLITE_LIMIT_LENGTH). sqlite3_limit only
// lowers the compiled maximum and costs a function call, so it is applied
// at every use of the connection. (The length of a datastore_search_sql
// statement is checked before it reaches the engine; datastore_search's
// own statements may be longer.)
func sqliteLimits(c *sql.Conn, maxValue int) error {
	if maxValue > 0 {
		if _, err := sqlite.Limit(c, sqlite3.SQLITE_LIMIT_LENGTH, maxValue); err != nil {
			return fmt.Errorf("datastore: limit value length: %w", err)
		}
	}
	return nil
}

// sqliteHandle is the sqlite3* of a connection of the embedded engine,
// which modernc.org/sqlite keeps in its connection's db field.
func sqliteHandle(c *sql.Conn) (uintptr, error) {
	var db uintptr
	err := c.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("unexpected SQLite connection type %T", dc)
		}
		f := v.Elem().FieldByName("db")
		if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
			return fmt.Errorf("SQLite connection %T has no db handle", dc)
		}
		db = uintptr(f.Uint())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("datastore: %w", err)
	}
	return db, nil
}

// interruptAt interrupts what runs on connection db when ctx ends: every
// step of a statement, also the steps that fetch later rows, which
// modernc.org/sqlite does not interrupt itself. stop must be called before
// the connection goes back to the pool; after it returns no interrupt
// reaches the connection.
func interruptAt(ctx context.Context, db uintptr) (stop func()) {
	var mu sync.Mutex
	stopped := false
	cancel := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			tls := libc.NewTLS()
			sqlite3.Xsqlite3_interrupt(tls, db)
			tls.Close()
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		cancel()
	}
}

// errNotSingle means SQLite's parser found more than one statement.
var errNotSingle = errors.New("more than one statement")

// sqliteSingleStatement asks SQLite's own parser, on connection db, whether
// q is exactly one statement (comments and white space around it are
// none): modernc.org/sqlite runs every statement of a query string, so
// this is the engine's answer, not the guard's reading of the text. It
// returns errNotSingle, or the parser's error for the first statement.
func sqliteSingleStatement(db uintptr, q string) error {
	if strings.IndexByte(q, 0) >= 0 {
		return errors.New("a NUL byte in the statement")
	}
	tls := libc.NewTLS()
	defer tls.Close()
	cq, err := libc.CString(q)
	if err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	defer libc.Xfree(tls, cq)
	const ptr = int(unsafe.Sizeof(uintptr(0)))
	out := tls.Alloc(2 * ptr) // the sqlite3_stmt* and the tail's char*
	defer tls.Free(2 * ptr)
	n := 0
	for p := cq; p < cq+uintptr(len(q)); {
		rc := sqlite3.Xsqlite3_prepare_v2(tls, db, p, -1, out, out+uintptr(ptr))
		if rc != sqlite3.SQLITE_OK {
			if n > 0 {
				return errNotSingle
			}
			return errors.New(libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db)))
		}
		stmt, tail := readPointers(out, ptr)
		if tail <= p {
			return errors.New("the parser did not advance")
		}
		p = tail
		if stmt == 0 {
			continue // only white space or a comment
		}
		sqlite3.Xsqlite3_finalize(tls, stmt)
		if n++; n > 1 {
			return errNotSingle
		}
	}
	if n == 0 {
		return errors.New("no statement")
	}
	return nil
}

// readPointers reads the two pointers of size ptr at C address at.
func readPointers(at uintptr, ptr int) (a, b uintptr) {
	mem := libc.GoBytes(at, 2*ptr)
	if ptr == 8 {
		return uintptr(binary.NativeEndian.Uint64(mem)), uintptr(binary.NativeEndian.Uint64(mem[8:]))
	}
	return uintptr(binary.NativeEndian.Uint32(mem)), uintptr(binary.NativeEndian.Uint32(mem[4:]))
}
