package datastore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// The load queue's fairness: every job records its submitter (the user
// whose write queued it). A worker takes the next job from the submitter
// with the fewest loads running, then from the one served longest ago, so
// that submitters take turns; a submitter never runs more than
// WorkersPerUser loads at once, so a few slow sources of one user leave
// workers for everyone else. Submit caps each submitter's waiting loads.

// migrateLoadQueue adds the submitter column to a job table made before
// it existed.
func (s *Store) migrateLoadQueue(ctx context.Context) error {
	probe := `SELECT submitter FROM ` + jobsTable + ` WHERE 1 = 0`
	if _, err := s.rw.ExecContext(ctx, probe); err == nil {
		return nil
	}
	if _, err := s.rw.ExecContext(ctx, `ALTER TABLE `+jobsTable+` ADD COLUMN submitter TEXT NOT NULL DEFAULT ''`); err != nil {
		// another process may have added it in between
		if _, perr := s.rw.ExecContext(ctx, probe); perr == nil {
			return nil
		}
		return fmt.Errorf("datastore: add the submitter column to %s: %w", jobsTable, err)
	}
	return nil
}

// waiting counts the loads of submitter waiting to run, other than the
// one of resourceID (which a new submission replaces).
func (l *Loader) waiting(ctx context.Context, submitter, resourceID string) (int, error) {
	p := l.s.d.ph
	var n int
	err := l.s.rd.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+jobsTable+` WHERE state = 'pending' AND submitter = `+p(1)+` AND resource_id <> `+p(2),
		submitter, resourceID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("datastore: count waiting loads: %w", err)
	}
	return n, nil
}

// turns remembers when this process last started a load of each
// submitter, for the round-robin between submitters.
type turns struct {
	mu   sync.Mutex // also serialises claims of this process's workers
	last map[string]time.Time
}

// maxTurns bounds the remembered submitters; the oldest are forgotten.
const maxTurns = 10000

func (t *turns) served(sub string, at time.Time) {
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	t.last[sub] = at
	if len(t.last) > maxTurns {
		cut := at.Add(-time.Hour)
		for k, v := range t.last {
			if v.Before(cut) {
				delete(t.last, k)
			}
		}
		if len(t.last) > maxTurns {
			t.last = map[string]time.Time{sub: at}
		}
	}
}

type candidate struct {
	id, src, submitter, updated string
	attempts                    int
	running                     int
	lastServed                  time.Time
}

// claimPerSubmitter is how many of each submitter's oldest jobs a claim
// considers (more than one, for when another process takes the first).
const claimPerSubmitter = 2

// claimScan bounds the candidates one claim reads.
const claimScan = 500

// candidates lists the jobs a worker may take: pending ones, and running
// ones whose worker stopped heart-beating (a crash or kill), each
// submitter's oldest first, with the submitter's live running loads.
func (l *Loader) candidates(ctx context.Context, stale int64) ([]candidate, error) {
	p := l.s.d.ph
	running := map[string]int{}
	rows, err := l.s.rd.QueryContext(ctx, `SELECT submitter, COUNT(*) FROM `+jobsTable+` WHERE state IN ('running', 'loaded') AND heartbeat >= `+p(1)+` GROUP BY submitter`, stale)
	if err != nil {
		return nil, fmt.Errorf("count running loads: %w", err)
	}
	for rows.Next() {
		var sub string
		var n int
		if err := rows.Scan(&sub, &n); err == nil {
			running[sub] = n
		}
	}
	rows.Close()
	rows, err = l.s.rd.QueryContext(ctx, `SELECT resource_id, source, attempts, submitter, updated FROM (
		SELECT resource_id, source, attempts, submitter, updated,
			ROW_NUMBER() OVER (PARTITION BY submitter ORDER BY updated, resource_id) AS turn
		FROM `+jobsTable+` WHERE state = 'pending' OR (state IN ('running', 'loaded') AND heartbeat < `+p(1)+`)
	) q WHERE turn <= `+fmt.Sprint(claimPerSubmitter)+` ORDER BY updated LIMIT `+fmt.Sprint(claimScan), stale)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.src, &c.attempts, &c.submitter, &c.updated); err == nil {
			c.running = running[c.submitter]
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// claim takes the next job by the queue's turns, or a running one whose
// worker stopped heart-beating; it gives up on a job interrupted too
// often.
func (l *Loader) claim(ctx context.Context) (claimed, bool) {
	if ctx.Err() != nil {
		return claimed{}, false
	}
	l.turns.mu.Lock()
	defer l.turns.mu.Unlock()
	stale := time.Now().Add(-l.cfg.Lease).UnixMilli()
	cands, err := l.candidates(ctx, stale)
	if err != nil {
		if ctx.Err() == nil {
			l.s.log.Error("datastore loader: list jobs", "err", err)
		}
		return claimed{}, false
	}
	for i := range cands {
		cands[i].lastServed = l.turns.last[cands[i].submitter]
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.running != b.running {
			return a.running < b.running
		}
		if !a.lastServed.Equal(b.lastServed) {
			return a.lastServed.Before(b.lastServed)
		}
		return a.updated < b.updated
	})
	p := l.s.d.ph
	for _, c := range cands {
		if c.running >= l.cfg.WorkersPerUser {
			continue
		}
		if c.attempts >= maxLoadAttempts {
			l.finish(ctx, c.id, "", "error", fmt.Sprintf("the load was interrupted %d times (the process stopped during the load); giving up", c.attempts), 0)
			continue
		}
		hb := time.Now().UnixMilli()
		res, err := l.s.rw.ExecContext(ctx, `UPDATE `+jobsTable+` SET state = 'running', owner = `+p(1)+`, heartbeat = `+p(2)+`, attempts = attempts + 1, updated = `+p(3)+`
			WHERE resource_id = `+p(4)+` AND (state = 'pending' OR (state IN ('running', 'loaded') AND heartbeat < `+p(5)+`))`, l.owner, hb, nowText(), c.id, stale)
		if err != nil {
			continue
		}
		if n, _ := res.RowsAffected(); n == 1 {
			var job Job
			_ = json.Unmarshal([]byte(c.src), &job)
			job.Submitter = c.submitter
			if c.attempts > 0 {
				l.logLine(ctx, c.id, "WARNING", fmt.Sprintf("Load restarted after an interruption (attempt %d)", c.attempts+1))
			}
			l.turns.served(c.submitter, time.Now())
			return claimed{Job: job, heartbeat: hb, attempts: c.attempts + 1}, true
		}
	}
	return claimed{}, false
}
