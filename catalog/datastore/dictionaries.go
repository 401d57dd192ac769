package datastore

import (
	"context"
	"fmt"
	"time"
)

// SetDictionary records whether resource id's table is a compound
// dictionary (the catalog's compound resolver reads those tables). The
// mark is kept by resource id, also while the table is absent.
func (s *Store) SetDictionary(ctx context.Context, id string, on bool) error {
	var err error
	if on {
		now := time.Now().UTC().Format(time.RFC3339)
		_, err = s.rw.ExecContext(ctx, `INSERT INTO `+dictTable+` (id, registered) VALUES (`+s.d.ph(1)+`, `+s.d.ph(2)+`) ON CONFLICT (id) DO NOTHING`, id, now)
	} else {
		_, err = s.rw.ExecContext(ctx, `DELETE FROM `+dictTable+` WHERE id = `+s.d.ph(1), id)
	}
	if err != nil {
		return fmt.Errorf("datastore: record dictionary %s: %w", id, err)
	}
	return nil
}

// Dictionaries lists the resource ids marked as compound dictionaries.
func (s *Store) Dictionaries(ctx context.Context) ([]string, error) {
	rows, err := s.rd.QueryContext(ctx, `SELECT id FROM `+dictTable+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("datastore: list dictionaries: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("datastore: list dictionaries: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
