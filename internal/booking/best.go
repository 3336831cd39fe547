package booking

import (
	"context"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// searchWindows widen best available's look when the best rows cannot seat the party:
// how many of the best free seats to consider, and at most how many rows they span.
var searchWindows = []struct{ seats, rows int32 }{{200, 8}, {1000, 32}, {5000, 128}}

// triesPerWindow bounds the claims attempted on one look before looking again.
const triesPerWindow = 4

// holdBest finds the best seats for the party and claims them with FOR UPDATE SKIP
// LOCKED: buyers racing for the same best seats step past each other's rows instead of
// queueing on them. A claim that comes back short (someone got there first) is undone
// to its savepoint and the next choice is tried.
func (s *Service) holdBest(ctx context.Context, tx pgx.Tx, q *db.Queries, req HoldRequest, hold db.HoldCreateRow) ([]Seat, error) {
	n := req.Quantity
	for _, w := range searchWindows {
		rows, freeCount, err := s.bestRows(ctx, q, req, w.seats, w.rows)
		if err != nil {
			return nil, err
		}
		var tries [][]int64
		for _, c := range pickTogether(rows, n) {
			tries = append(tries, c.ids)
			if len(tries) == triesPerWindow {
				break
			}
		}
		if len(tries) == 0 && !req.Together {
			if ids := pickScattered(rows, n); ids != nil {
				tries = append(tries, ids)
			}
		}
		for _, ids := range tries {
			seats, err := s.claimUnlocked(ctx, tx, q, req.EventID, ids, hold)
			if err != nil {
				return nil, err
			}
			if seats != nil {
				return seats, nil
			}
		}
		if freeCount < int(w.seats) && len(tries) == 0 {
			// The window already saw every free seat: looking wider finds nothing more.
			break
		}
	}
	return nil, ErrSoldOut
}

// bestRows loads the candidate rows, best first, and counts the free seats in them.
func (s *Service) bestRows(ctx context.Context, q *db.Queries, req HoldRequest, seatLimit, rowLimit int32) ([]seatRow, int, error) {
	var raw []db.SeatBestRowsRow
	var err error
	if req.Section != "" {
		var in []db.SeatBestRowsInSectionRow
		in, err = q.SeatBestRowsInSection(ctx, db.SeatBestRowsInSectionParams{
			EventID: req.EventID, Section: req.Section, SeatLimit: seatLimit, RowLimit: rowLimit,
		})
		for _, r := range in {
			raw = append(raw, db.SeatBestRowsRow(r))
		}
	} else {
		raw, err = q.SeatBestRows(ctx, db.SeatBestRowsParams{EventID: req.EventID, SeatLimit: seatLimit, RowLimit: rowLimit})
	}
	if err != nil {
		return nil, 0, err
	}
	var rows []seatRow
	free := 0
	for i, r := range raw {
		if i == 0 || r.Section != raw[i-1].Section || r.RowLabel != raw[i-1].RowLabel {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], rowSeat{
			ID: r.ID, Number: int(r.Number), Price: int(r.PriceCents), Rank: int(r.Rank), Free: r.Free,
		})
		if r.Free {
			free++
		}
	}
	return rows, free, nil
}

// claimUnlocked claims exactly ids inside a savepoint, or nothing: nil seats and no
// error mean another buyer was quicker.
func (s *Service) claimUnlocked(ctx context.Context, tx pgx.Tx, q *db.Queries, eventID int64, ids []int64, hold db.HoldCreateRow) ([]Seat, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.WithTx(sp).SeatClaimUnlocked(ctx, db.SeatClaimUnlockedParams{
		EventID: eventID, SeatIds: ids, HoldID: &hold.ID, ExpiresAt: &hold.ExpiresAt,
	})
	if err != nil {
		_ = sp.Rollback(ctx)
		return nil, err
	}
	if len(rows) != len(ids) {
		return nil, sp.Rollback(ctx)
	}
	if err := sp.Commit(ctx); err != nil {
		return nil, err
	}
	seats := make([]Seat, len(rows))
	for i, r := range rows {
		seats[i] = Seat{ID: r.ID, Section: r.Section, Row: r.RowLabel, Number: int(r.Number), PriceCents: int(r.PriceCents)}
	}
	return seats, nil
}
