package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

// planCheck is how the planner would go about one event's seats.
type planCheck struct {
	Expected int  // seats of the event the planner expects
	Seats    int  // seats the event has
	ByID     bool // a one-seat claim (UPDATE ... id = n, and SeatHold's id = ANY) finds the seat by its id
}

func (p planCheck) String() string {
	if p.ByID {
		return "ok"
	}
	return fmt.Sprintf("stale statistics: expects %s of its %s seats, a one-seat claim reads the whole event",
		benchkit.Thousands(p.Expected), benchkit.Thousands(p.Seats))
}

func planNote(before, after planCheck) string {
	if before.String() == after.String() {
		return before.String()
	}
	return before.String() + " → after: " + after.String()
}

var (
	estimateRe  = regexp.MustCompile(`rows=([0-9]+)`)
	indexByIDRe = regexp.MustCompile(`Index Cond: .*\bid = `)
)

// checkPlan asks the planner (EXPLAIN, which runs nothing and changes no statistics)
// how many seats it expects the event to have, and whether the pgbench UPDATE and the
// select of SeatHold would reach one seat through its id or read the whole event.
func (s *server) checkPlan(ctx context.Context, ev event) (planCheck, error) {
	pc := planCheck{Seats: len(ev.SeatIDs), ByID: true}
	evID, seat := strconv.FormatInt(ev.ID, 10), strconv.FormatInt(ev.SeatIDs[len(ev.SeatIDs)/2], 10)
	free := " AND sold_at IS NULL AND (held_by IS NULL OR hold_expires_at <= now())"
	for i, q := range []string{
		"SELECT 1 FROM seats WHERE event_id = " + evID,
		"UPDATE seats SET held_by = 0, hold_expires_at = now() WHERE event_id = " + evID + " AND id = " + seat + free,
		"SELECT id FROM seats WHERE event_id = " + evID + " AND id = ANY('{" + seat + "}'::bigint[])" + free + " ORDER BY id FOR UPDATE",
	} {
		rows, err := s.setup.Query(ctx, "EXPLAIN "+q)
		if err != nil {
			return pc, fmt.Errorf("explain: %w", err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return pc, err
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			return pc, err
		}
		text := strings.Join(plan, "\n")
		if i == 0 {
			if m := estimateRe.FindStringSubmatch(text); m != nil {
				pc.Expected, _ = strconv.Atoi(m[1])
			}
		} else if !indexByIDRe.MatchString(text) {
			pc.ByID = false
		}
	}
	return pc, nil
}

// waitPlannerKnows waits until the planner expects each event to have at least a tenth
// of its seats, that is until statistics taken after the events were created exist
// (autovacuum's, or an ANALYZE the application ran), polling once a second for at most
// limit. It reports whether they came; the measurements go ahead either way.
func (s *server) waitPlannerKnows(ctx context.Context, events []event, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		known := true
		for _, ev := range events {
			pc, err := s.checkPlan(ctx, ev)
			if err != nil {
				return false, err
			}
			if pc.Expected < pc.Seats/10 {
				known = false
				break
			}
		}
		if known {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
		}
	}
}
