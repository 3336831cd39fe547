package booking

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// The sales window. Every statement that starts a sale carries the window in its own
// condition, checked by the database clock with event_on_sale
// (migrations/functions/sales_window.sql): hold_seats (exact holds), HoldCreate (best
// available and general admission, whose claims follow in its transaction),
// OrderCreate (checkout) and PaymentClaim (pay). When one of them refuses,
// saleWindowError reads the event afterwards to say why; the verdict was already the
// statement's. Confirming a payment is not refused: see ApplyPayment.

// saleWindowError says why a statement that carries the window refused, if the window
// is why: a *NotOnSaleError, ErrSalesClosed, or ErrEventNotFound. nil means the sale
// is open and the refusal had another cause. Run inside the refusing statement's
// transaction, it sees the same now() as the statement did.
func saleWindowError(ctx context.Context, q *db.Queries, eventID int64) error {
	w, err := q.EventSaleWindow(ctx, eventID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ErrEventNotFound
	case err != nil:
		return err
	case w.State == "not_on_sale":
		return &NotOnSaleError{OnsaleAt: w.OnsaleAt}
	case w.State == "closed":
		return ErrSalesClosed
	}
	return nil
}
