package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"toxgate/catalog/datastore/pgtest"
	"toxgate/gateway/store"
)

// pgStore opens a store whose embedded FerretDB keeps its data in a new
// database of a throwaway PostgreSQL server, as a gateway with
// store.backend postgresql does; it returns the store and the database's
// postgres:// URL.
func pgStore(t testing.TB) (*store.Store, string) {
	t.Helper()
	pg := pgtest.Start(t)
	url, err := pg.NewDatabase("toxgate")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Options{Backend: store.BackendPostgreSQL, PostgresURL: url, Database: "toxgate",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st, url
}

// TestClaimSurvivesRecordIDCollision makes the next row numbers of the
// capped claims collection already taken in PostgreSQL, as another
// gateway's FerretDB (with a counter of its own) takes them when both
// insert within the same second, and checks that a claim is still won,
// and that a claim really held is still refused.
func TestClaimSurvivesRecordIDCollision(t *testing.T) {
	st, url := pgStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newRecordStore(st.DB(), nil)
	if err := c.ensureClaims(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var table string
	if err := db.QueryRowContext(ctx, `SELECT _jsonb->>'table' FROM toxgate._ferretdb_database_metadata WHERE _jsonb->>'_id' = $1`, CollClaims).Scan(&table); err != nil {
		t.Fatalf("find the claims table: %v", err)
	}
	q := fmt.Sprintf(`SELECT max(_ferretdb_record_id) FROM toxgate.%q`, table)
	var last int64
	if err := db.QueryRowContext(ctx, q).Scan(&last); err != nil {
		t.Fatal(err)
	}
	// the next inserts of this process number their rows <second> << 32 |
	// counter+1, +2, ...: take those numbers for this second and the next
	// few, as another process would
	counter := last & 0xffffffff
	now := time.Now().Unix()
	taken := 0
	for sec := now; sec <= now+3; sec++ {
		for n := counter + 1; n <= counter+4; n++ {
			_, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO toxgate.%q (_ferretdb_record_id, _jsonb)
				SELECT $1, jsonb_set(_jsonb, '{_id}', to_jsonb($2::text)) FROM toxgate.%q LIMIT 1`, table, table),
				sec<<32|n, fmt.Sprintf("other:%d:%d", sec, n))
			if err != nil {
				t.Fatalf("take row number: %v", err)
			}
			taken++
		}
	}
	if err := c.insertClaim(ctx, "d:x@2"); err != nil {
		t.Fatalf("claim refused although nobody holds it: %v", err)
	}
	n, err := c.claims.CountDocuments(ctx, bson.M{"_id": "d:x@2"})
	if err != nil || n != 1 {
		t.Fatalf("claim d:x@2 stored %d times (%v), want 1", n, err)
	}
	if err := c.insertClaim(ctx, "d:x@2"); !isDup(err) {
		t.Fatalf("second claim of d:x@2: %v, want a duplicate-key error", err)
	}
	t.Logf("%d row numbers taken by another writer; the claim went through", taken)
}

// TestSequenceRaiseRepairsALostUpdate is the race of two gateways raising
// the sequence document at once, where the one writing the lower number
// writes last: the marker is at 7, the document at 6 as that late writer
// left it. Its check must raise the document to the marker again, or
// readers at 6 would never read change 7.
func TestSequenceRaiseRepairsALostUpdate(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newRecordStore(f.db, nil)
	if _, err := c.changes.ReplaceOne(ctx, bson.M{"_id": markerID}, bson.M{"_id": markerID, "seq": 7, "recent": bson.A{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.changeSeq.ReplaceOne(ctx, bson.M{"_id": markerID}, bson.M{"_id": markerID, "seq": 6}); err != nil {
		t.Fatal(err)
	}
	if err := c.raiseSeq(ctx, 6); err != nil {
		t.Fatal(err)
	}
	seq, _, err := c.readSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 7 {
		t.Fatalf("sequence document at %d after the late writer's raise, want the marker's 7", seq)
	}
}

// BenchmarkCatalogWriteStore is the store's cost of one catalog write
// (package_patch of one dataset: claim, record, activity, marker) on the
// embedded SQLite store and on the embedded store over PostgreSQL, in
// alternating rounds of the same run (so that both see the same machine),
// and their ratio.
func BenchmarkCatalogWriteStore(b *testing.B) {
	backends := []string{store.BackendSQLite, store.BackendPostgreSQL}
	fixtures := make([]*fixture, len(backends))
	for i, backend := range backends {
		uri := testURI
		if backend == store.BackendPostgreSQL {
			st, _ := pgStore(b)
			uri = st.URI()
		}
		fixtures[i] = newFixtureAt(b, uri, fmt.Sprintf("bench_write_%d", dbSeq.Add(1)))
		fixtures[i].ok("editor", "package_create", map[string]any{"name": "bench-write", "owner_org": "tox-lab"})
	}
	const rounds = 10
	per := max(b.N/rounds, 1)
	spent := make([]time.Duration, len(backends))
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for i, f := range fixtures {
			start := time.Now()
			for k := 0; k < per; k++ {
				f.ok("editor", "package_patch", map[string]any{"id": "bench-write", "notes": fmt.Sprint(r, k)})
			}
			spent[i] += time.Since(start)
		}
	}
	n := float64(rounds * per)
	for i, backend := range backends {
		b.ReportMetric(float64(spent[i].Microseconds())/1000/n, backend+"-ms/write")
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "postgresql/sqlite")
}
