package booking

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/zone"
)

// The box office's view of orders: search, one order with everything about
// it, and the orders export. Read-only; the changes are in staffrefund.go.

// OrderHit is one order found by SearchOrders.
type OrderHit struct {
	ID           int64
	EventID      int64
	EventName    string
	Zone         *time.Location // the event's
	Email        string
	Status       string
	AmountCents  int
	CreatedAt    time.Time
	ValidTickets int
}

// SearchPage is one page of orders found, newest first.
type SearchPage struct {
	Orders []OrderHit
	// Next is the id to pass as before for the next page; 0 when this is the last.
	Next int64
}

// MaxSearchQuery bounds what a search may be: longer is no email, id or code.
const MaxSearchQuery = 254

// SearchOrders finds orders by what staff typed: an order id (digits, "#42" too), a
// ticket code, or the start of an email, case-insensitively; nothing typed finds every
// order. Pages hold perPage orders at most, newest first, older than before when it
// is not 0.
func (s *Desk) SearchOrders(ctx context.Context, query string, before int64, perPage int) (SearchPage, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		rows, err := s.q.OrdersRecent(ctx, db.OrdersRecentParams{BeforeID: before, MaxRows: int32(perPage + 1)})
		if err != nil {
			return SearchPage{}, translate(err)
		}
		hits := make([]db.OrderSearchRow, len(rows))
		for i, r := range rows {
			hits[i] = db.OrderSearchRow(r)
		}
		return searchPage(hits, perPage), nil
	}
	p := db.OrderSearchParams{BeforeID: before, MaxRows: int32(perPage + 1)}
	if id, err := strconv.ParseInt(strings.TrimPrefix(query, "#"), 10, 64); err == nil && id > 0 {
		p.OrderID = id
	}
	p.Code = strings.ToLower(query)
	if query != "" {
		// LIKE's own characters are matched as themselves.
		p.Email = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(query))
	}
	rows, err := s.q.OrderSearch(ctx, p)
	if err != nil {
		return SearchPage{}, translate(err)
	}
	return searchPage(rows, perPage), nil
}

// searchPage is up to perPage of rows, read one past it to know whether a next page
// exists.
func searchPage(rows []db.OrderSearchRow, perPage int) SearchPage {
	var out SearchPage
	for i, r := range rows {
		if i == perPage {
			out.Next = out.Orders[i-1].ID
			break
		}
		out.Orders = append(out.Orders, OrderHit{ID: r.ID, EventID: r.EventID, EventName: r.EventName, Zone: zone.Of(r.TimeZone), Email: r.Email,
			Status: string(r.Status), AmountCents: int(r.AmountCents), CreatedAt: r.CreatedAt, ValidTickets: int(r.ValidTickets)})
	}
	return out
}

// AdminTicket is one ticket of an order as staff see it: valid or not, used or not.
type AdminTicket struct {
	ID          int64
	Code        string
	Seat        string // "Stalls, row F, seat 12", or the GA tier's name
	PriceCents  int
	VoidedAt    *time.Time
	VoidReason  string // refund or void, when staff ended it
	CheckedInAt *time.Time
	Gate        string
}

// adminTicket is a ticket row as staff see it.
func adminTicket(t db.TicketsOfOrderAdminRow) AdminTicket {
	at := AdminTicket{ID: t.ID, Code: t.Code, PriceCents: int(t.PriceCents), VoidedAt: t.VoidedAt,
		CheckedInAt: t.CheckedInAt, Seat: t.GaTierName}
	if t.SeatID != nil {
		at.Seat = SeatName(t.Section, t.RowLabel, int(t.Number))
	}
	if t.VoidReason != nil {
		at.VoidReason = *t.VoidReason
	}
	if t.CheckedInGate != nil {
		at.Gate = *t.CheckedInGate
	}
	return at
}

// Valid reports whether the ticket still admits someone.
func (t AdminTicket) Valid() bool { return t.VoidedAt == nil }

// AdminPayment is one charge attempt of an order.
type AdminPayment struct {
	ID                int64
	Provider          string
	ProviderPaymentID string
	AmountCents       int
	State             string
	CreatedAt         time.Time
}

// AdminRefund is one refund of an order.
type AdminRefund struct {
	ID          int64
	AmountCents int
	Reason      string
	State       string
	ByStaff     bool
	CreatedAt   time.Time
}

// AuditEntry is one thing staff did to an order.
type AuditEntry struct {
	At        time.Time
	Action    string
	StaffName string
	Before    string // JSON, "" for none
	After     string // JSON, "" for none
}

// AdminOrder is an order with everything about it, for the box office.
type AdminOrder struct {
	// Order is the order's own fields (id, event, email, status and reason, amount);
	// what it owns is in Tickets, payments and refunds below.
	Order     Order
	EventName string
	Zone      *time.Location // the event's
	CreatedAt time.Time
	Confirmed *time.Time
	Tickets   []AdminTicket
	Payments  []AdminPayment
	Refunds   []AdminRefund
	History   []AuditEntry
}

// OrderAdmin returns an order with its tickets (valid or not), payments, refunds and
// what staff did to it.
func (s *Desk) OrderAdmin(ctx context.Context, id int64) (AdminOrder, error) {
	o, err := s.q.OrderGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return AdminOrder{}, ErrOrderNotFound
	} else if err != nil {
		return AdminOrder{}, translate(err)
	}
	// Not orderView: its seats, payments, refunds and tickets are read below in the
	// box office's own form.
	view := Order{ID: o.ID, EventID: o.EventID, Email: o.Email, Status: string(o.Status),
		StatusReason: o.StatusReason, AmountCents: int(o.AmountCents)}
	ev, err := s.event(ctx, o.EventID)
	if err != nil {
		return AdminOrder{}, err
	}
	out := AdminOrder{Order: view, EventName: ev.Name, Zone: ev.Zone, CreatedAt: o.CreatedAt, Confirmed: o.ConfirmedAt}
	tickets, err := s.q.TicketsOfOrderAdmin(ctx, db.TicketsOfOrderAdminParams{EventID: o.EventID, OrderID: o.ID})
	if err != nil {
		return AdminOrder{}, translate(err)
	}
	for _, t := range tickets {
		out.Tickets = append(out.Tickets, adminTicket(t))
	}
	pays, err := s.q.PaymentsOfOrder(ctx, o.ID)
	if err != nil {
		return AdminOrder{}, translate(err)
	}
	for _, p := range pays {
		ap := AdminPayment{ID: p.ID, Provider: p.Provider, AmountCents: int(p.AmountCents), State: string(p.State), CreatedAt: p.CreatedAt}
		if p.ProviderPaymentID != nil {
			ap.ProviderPaymentID = *p.ProviderPaymentID
		}
		out.Payments = append(out.Payments, ap)
	}
	refunds, err := s.q.RefundsOfOrder(ctx, o.ID)
	if err != nil {
		return AdminOrder{}, translate(err)
	}
	for _, r := range refunds {
		out.Refunds = append(out.Refunds, AdminRefund{ID: r.ID, AmountCents: int(r.AmountCents), Reason: r.Reason,
			State: string(r.State), ByStaff: r.ByStaff, CreatedAt: r.CreatedAt})
	}
	hist, err := s.q.AuditOfSubject(ctx, db.AuditOfSubjectParams{Subject: OrderSubject(o.ID), MaxRows: 50})
	if err != nil {
		return AdminOrder{}, translate(err)
	}
	for _, h := range hist {
		out.History = append(out.History, AuditEntry{At: h.At, Action: h.Action, StaffName: h.StaffName,
			Before: string(h.Before), After: string(h.After)})
	}
	return out, nil
}

// ExportOrder is one order in the orders export.
type ExportOrder struct {
	ID            int64
	Email         string
	Status        string
	StatusReason  string
	AmountCents   int
	RefundedCents int
	ValidTickets  int
	VoidTickets   int
	CreatedAt     time.Time
	ConfirmedAt   *time.Time
}

// exportPage is how many rows an export reads at a time: an export streams, and never
// holds a whole event in memory or a transaction open while the client reads.
const exportPage = 500

// ExportOrders calls fn with each order of the event, oldest first, a page of rows
// at a time; an error from fn stops it.
func (s *Desk) ExportOrders(ctx context.Context, eventID int64, fn func(ExportOrder) error) error {
	var after int64
	for {
		rows, err := s.q.OrdersExport(ctx, db.OrdersExportParams{EventID: eventID, AfterID: after, MaxRows: exportPage})
		if err != nil {
			return translate(err)
		}
		for _, r := range rows {
			if err := fn(ExportOrder{ID: r.ID, Email: r.Email, Status: string(r.Status), StatusReason: r.StatusReason,
				AmountCents: int(r.AmountCents), RefundedCents: int(r.RefundedCents), ValidTickets: int(r.ValidTickets),
				VoidTickets: int(r.VoidTickets), CreatedAt: r.CreatedAt, ConfirmedAt: r.ConfirmedAt}); err != nil {
				return err
			}
			after = r.ID
		}
		if len(rows) < exportPage {
			return nil
		}
	}
}
