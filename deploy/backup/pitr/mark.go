package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Mark is the target of a restore and what must be in the database restored to it.
type Mark struct {
	Event int64 `json:"event"`
	// Target is the database's clock after Confirmed was read, in PostgreSQL's text
	// form with microseconds and zone, ready for recovery_target_time.
	Target string `json:"target"`
	// Confirmed are the orders confirmed in a snapshot taken before Target.
	Confirmed []int64 `json:"confirmed"`
}

// markTarget reads the confirmed orders first and the clock second: a snapshot sees
// only transactions whose commit records are already written, with earlier times.
func markTarget(ctx context.Context, pool *pgxpool.Pool, event int64, path string, stdout io.Writer) error {
	m := Mark{Event: event, Confirmed: []int64{}}
	rows, err := pool.Query(ctx, `SELECT id FROM orders WHERE event_id = $1 AND status = 'confirmed' ORDER BY id`, event)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		m.Confirmed = append(m.Confirmed, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	err = pool.QueryRow(ctx, `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'`).Scan(&m.Target)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "target=%q confirmed=%d\n", m.Target, len(m.Confirmed))
	return nil
}

func readMark(path string) (Mark, error) {
	var m Mark
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(b, &m)
	return m, err
}
