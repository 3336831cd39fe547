package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// measure runs the measurements -only asks for. Every event of the run is created
// first; with -settle the run then waits until the planner's statistics know every
// event, as they do when events are created long before their sale. Before and after
// each measurement the planner is asked how it would claim one of the event's seats:
// statistics that predate an event make it read the whole event.
func measure(ctx context.Context, srv *server, opts options, rep *report) error {
	cl := newAPIClient(srv.URL, opts.clients)
	defer cl.Close()

	type roundEvents struct {
		api, pgbench, fresh, held event
		confirmAPI, confirmPg     event
		decompose                 []event
		arrive                    arriveTarget
	}
	events := make([]roundEvents, opts.rounds)
	for i := range events {
		var err error
		e := &events[i]
		if opts.wants("api") {
			if e.api, err = srv.newEvent(ctx, "bench-api", opts.seats); err != nil {
				return err
			}
		}
		if opts.wants("pgbench") {
			if e.pgbench, err = srv.newEvent(ctx, "bench-pgbench", opts.pgSeats); err != nil {
				return err
			}
		}
		if opts.decompose && opts.wants("api") {
			for range decomposeSpecs {
				ev, err := srv.newEvent(ctx, "bench-sql", opts.pgSeats)
				if err != nil {
					return err
				}
				e.decompose = append(e.decompose, ev)
			}
		}
		if opts.wants("confirm") {
			if e.confirmAPI, err = srv.newEvent(ctx, "bench-confirm-api", opts.confirmOrders); err != nil {
				return err
			}
			if e.confirmPg, err = srv.newEvent(ctx, "bench-confirm-pgbench", opts.confirmPgOrders); err != nil {
				return err
			}
		}
		if opts.wants("arrive") {
			if e.arrive, err = srv.arriveEvent(ctx); err != nil {
				return err
			}
		}
		if opts.wants("best") {
			if e.fresh, err = srv.newEvent(ctx, "bench-best-fresh", opts.seats); err != nil {
				return err
			}
			if e.held, err = srv.newEvent(ctx, "bench-best-held", opts.seats); err != nil {
				return err
			}
		}
	}
	step(fmt.Sprintf("created the events of %d round(s)", opts.rounds))

	need := 0
	if opts.wants("api") {
		need = max(need, opts.seats/exactKind.seatsPerSession()+opts.clients+1)
	}
	if opts.wants("best") {
		need = max(need, opts.seats/bestKind.seatsPerSession()+opts.clients+1)
	}
	if opts.wants("confirm") {
		need = max(need, (opts.confirmOrders+9)/10)
	}
	var sessions []buyer
	if need > 0 {
		step(fmt.Sprintf("creating %d sessions through GET /api/v1/session", need))
		t := time.Now()
		var err error
		if sessions, err = cl.createSessions(ctx, need, opts.clients); err != nil {
			return err
		}
		rep.SessionSetup = time.Since(t)
		rep.Sessions = len(sessions)
	}
	if opts.settle {
		step("waiting for the planner's statistics to know every event")
		var all []event
		for _, e := range events {
			for _, ev := range append([]event{e.api, e.pgbench, e.fresh, e.held, e.confirmAPI, e.confirmPg}, e.decompose...) {
				if ev.ID != 0 {
					all = append(all, ev)
				}
			}
		}
		t := time.Now()
		known, err := srv.waitPlannerKnows(ctx, all, 3*time.Minute)
		if err != nil {
			return err
		}
		rep.Settled, rep.SettleFailed = time.Since(t), !known
	}

	for i, e := range events {
		rd := round{}
		suffix := ""
		if opts.rounds > 1 {
			suffix = fmt.Sprintf("-round%d", i+1)
		}
		say := func(format string, args ...any) {
			if opts.rounds > 1 {
				format = fmt.Sprintf("round %d/%d: ", i+1, opts.rounds) + format
			}
			step(fmt.Sprintf(format, args...))
		}
		api := func(ev event, kind holdKind, suffix string) (*apiResult, error) {
			before, err := srv.checkPlan(ctx, ev)
			if err != nil {
				return nil, err
			}
			res, err := runAPI(ctx, srv, cl, sessions, ev, kind, opts, suffix)
			if err != nil {
				return nil, err
			}
			after, err := srv.checkPlan(ctx, ev)
			res.Plans = planNote(before, after)
			return &res, err
		}
		var err error
		if opts.wants("api") {
			say("api: exact one-seat holds on event %d", e.api.ID)
			if rd.API, err = api(e.api, exactKind, suffix); err != nil {
				return err
			}
		}
		if opts.wants("pgbench") {
			say("pgbench: the same conditional UPDATE on event %d", e.pgbench.ID)
			before, err := srv.checkPlan(ctx, e.pgbench)
			if err != nil {
				return err
			}
			res, err := runPgbench(ctx, srv, e.pgbench, opts, claimSpec)
			if err != nil {
				return err
			}
			after, err := srv.checkPlan(ctx, e.pgbench)
			if err != nil {
				return err
			}
			res.Plans = planNote(before, after)
			rd.Pgbench = &res
		}
		for j, ev := range e.decompose {
			spec := decomposeSpecs[j]
			say("%s on event %d", spec.Name, ev.ID)
			before, err := srv.checkPlan(ctx, ev)
			if err != nil {
				return err
			}
			res, err := runPgbench(ctx, srv, ev, opts, spec)
			if err != nil {
				return err
			}
			after, err := srv.checkPlan(ctx, ev)
			if err != nil {
				return err
			}
			res.Plans = planNote(before, after)
			rd.Decomposed = append(rd.Decomposed, &res)
		}
		if opts.wants("confirm") {
			say("confirm: pay + webhook confirm through the API on event %d", e.confirmAPI.ID)
			if rd.ConfirmAPI, err = runConfirmAPI(ctx, srv, cl, sessions, e.confirmAPI, opts); err != nil {
				return err
			}
			say("confirm: pgbench, the confirm statements on event %d", e.confirmPg.ID)
			if rd.ConfirmPg, err = runConfirmPgbench(ctx, srv, e.confirmPg, opts); err != nil {
				return err
			}
		}
		if opts.wants("best") {
			say("best: best available 4 on fresh event %d", e.fresh.ID)
			if rd.BestFresh, err = api(e.fresh, bestKind, suffix+"-best-fresh"); err != nil {
				return err
			}
			// The cheapest seats are held just before, so the statistics have not seen it.
			if err := srv.holdCheapest(ctx, &e.held, opts.held); err != nil {
				return err
			}
			say("best: best available 4 on event %d, its %d cheapest seats held", e.held.ID, opts.held)
			if rd.BestHeld, err = api(e.held, bestKind, suffix+"-best-held"); err != nil {
				return err
			}
		}
		if opts.wants("arrive") {
			say("arrive: a new session and a waiting-room join through the API on event %d", e.arrive.ID)
			if rd.Arrive, err = runArrivals(ctx, srv, opts, "API arrivals (session + join)", srv.URL, e.arrive, suffix+"-arrive"); err != nil {
				return err
			}
			minimal, err := startMinimalFrontDoor(ctx, srv, e.arrive)
			if err != nil {
				return err
			}
			say("arrive: the same against a minimal net/http server and the same Redis join")
			rd.ArriveMinimal, err = runArrivals(ctx, srv, opts, "minimal net/http arrivals (cookie + join)", minimal.URL, e.arrive, suffix+"-arrive-minimal")
			minimal.Close()
			if err != nil {
				return err
			}
		}
		rep.Rounds = append(rep.Rounds, rd)
	}
	return nil
}

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
		num(p.Expected), num(p.Seats))
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
