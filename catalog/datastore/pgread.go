package datastore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
)

// errRowTooLarge is a PostgreSQL message (a result row) longer than the
// read connections accept.
var errRowTooLarge = errors.New("a result row is larger than the DataStore accepts")

// openPGReads opens the pool of PostgreSQL read connections: every message
// the server sends on them is at most maxMessage bytes (0: any), checked
// from its header before the driver allocates it, so that no single row
// can make the plugin hold more than that.
func openPGReads(url string, maxMessage int) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("datastore: PostgreSQL URL: %w", err)
	}
	if maxMessage > 0 {
		cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
			return pgproto3.NewFrontend(&frameGuard{r: r, max: int64(maxMessage)}, w)
		}
	}
	return stdlib.OpenDB(*cfg), nil
}

// frameGuard follows the framing of PostgreSQL's backend messages (a type
// byte, a 4-byte length, the body) through the bytes read and fails the
// read that brings the header of a message longer than max. The
// connection is then closed by the driver.
type frameGuard struct {
	r    io.Reader
	max  int64
	head [5]byte
	nh   int   // header bytes of the current message seen so far
	left int64 // body bytes of the current message still to come
	// tripped is set once a message was too long
	tripped bool
}

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.tripped {
		return 0, errRowTooLarge
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; {
		if g.left > 0 {
			k := min(int64(n-i), g.left)
			i += int(k)
			g.left -= k
			continue
		}
		g.head[g.nh] = p[i]
		g.nh++
		i++
		if g.nh == len(g.head) {
			g.nh = 0
			g.left = int64(binary.BigEndian.Uint32(g.head[1:])) - 4
			if g.left > g.max {
				g.tripped = true // every later read fails alike: the stream is cut
				return 0, errRowTooLarge
			}
		}
	}
	return n, err
}

// probeTempFileLimit reports whether this role may set temp_file_limit
// (PostgreSQL lets only superusers and roles granted SET on it); without
// it datastore_search_sql runs with the server's setting, and a warning
// says how to grant it.
func (s *Store) probeTempFileLimit(ctx context.Context) bool {
	if s.lim.PGTempFileLimit <= 0 {
		return false
	}
	tx, err := s.rd.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		s.log.Warn("datastore: cannot check temp_file_limit", "err", err)
		return false
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if _, err := tx.ExecContext(ctx, `SELECT set_config('temp_file_limit', $1, true)`, kB(s.lim.PGTempFileLimit)); err != nil {
		s.log.Warn("datastore: this PostgreSQL role may not set temp_file_limit, so datastore_search_sql's temporary files are bounded only by the server's setting; "+
			"grant it (GRANT SET ON PARAMETER temp_file_limit TO <role>, PostgreSQL 15+) or set temp_file_limit for the role", "err", engineMessage(err))
		return false
	}
	return true
}

// pgReadLimits sets, for the transaction tx of one datastore_search_sql
// call, the statement time limit, the memory of sorts and hashes, the
// temporary files (when the role may) and standard strings, whose quoting
// the statement check reads (sqllex.go).
func (s *Store) pgReadLimits(ctx context.Context, tx *sql.Tx) error {
	q := `SELECT set_config('statement_timeout', $1, true), set_config('standard_conforming_strings', 'on', true)`
	args := []any{strconv.FormatInt(s.lim.SQLTimeout.Milliseconds(), 10)}
	if s.lim.PGWorkMem > 0 {
		q += `, set_config('work_mem', $2, true)`
		args = append(args, kB(s.lim.PGWorkMem))
	}
	if s.pgTempLimit {
		q += `, set_config('temp_file_limit', $` + strconv.Itoa(len(args)+1) + `, true)`
		args = append(args, kB(s.lim.PGTempFileLimit))
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("datastore: read limits: %w", err)
	}
	return rows.Close()
}

// kB is a size in bytes as a PostgreSQL setting in kilobytes (at least 1).
func kB(n int64) string {
	return strconv.FormatInt(max(n/1024, 1), 10) + "kB"
}
