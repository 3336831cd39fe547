package db

// Hand-written, beside sqlc's code: the statements that price a basket, for Pipeline.

import "github.com/jackc/pgx/v5"

// HoldBasket queues Queries.HoldBasket.
func (p *Pipeline) HoldBasket(arg HoldBasketParams) *Row[HoldBasketRow] {
	return queueRow(p, pgx.RowToStructByPos[HoldBasketRow], func(q *Queries) { q.HoldBasket(recording, arg) })
}

// HoldBasketSeats queues Queries.HoldBasketSeats.
func (p *Pipeline) HoldBasketSeats(arg HoldBasketSeatsParams) *Rows[HoldBasketSeatsRow] {
	return queueRows(p, pgx.RowToStructByPos[HoldBasketSeatsRow], func(q *Queries) { q.HoldBasketSeats(recording, arg) })
}

// PricingGet queues Queries.PricingGet.
func (p *Pipeline) PricingGet(eventID int64) *Row[PricingGetRow] {
	return queueRow(p, pgx.RowToStructByPos[PricingGetRow], func(q *Queries) { q.PricingGet(recording, eventID) })
}

// FeeList queues Queries.FeeList.
func (p *Pipeline) FeeList(eventID int64) *Rows[FeeListRow] {
	return queueRows(p, pgx.RowToStructByPos[FeeListRow], func(q *Queries) { q.FeeList(recording, eventID) })
}

// TicketTypeList queues Queries.TicketTypeList.
func (p *Pipeline) TicketTypeList(eventID int64) *Rows[TicketTypeListRow] {
	return queueRows(p, pgx.RowToStructByPos[TicketTypeListRow], func(q *Queries) { q.TicketTypeList(recording, eventID) })
}

// TicketTypePriceList queues Queries.TicketTypePriceList.
func (p *Pipeline) TicketTypePriceList(eventID int64) *Rows[TicketTypePriceListRow] {
	return queueRows(p, pgx.RowToStructByPos[TicketTypePriceListRow], func(q *Queries) { q.TicketTypePriceList(recording, eventID) })
}

// VoucherByCode queues Queries.VoucherByCode.
func (p *Pipeline) VoucherByCode(arg VoucherByCodeParams) *Row[VoucherByCodeRow] {
	return queueRow(p, pgx.RowToStructByPos[VoucherByCodeRow], func(q *Queries) { q.VoucherByCode(recording, arg) })
}

// OrderLineList queues Queries.OrderLineList.
func (p *Pipeline) OrderLineList(arg OrderLineListParams) *Rows[OrderLineListRow] {
	return queueRows(p, pgx.RowToStructByPos[OrderLineListRow], func(q *Queries) { q.OrderLineList(recording, arg) })
}

// VoucherRedemptionGet queues Queries.VoucherRedemptionGet.
func (p *Pipeline) VoucherRedemptionGet(arg VoucherRedemptionGetParams) *Row[VoucherRedemptionGetRow] {
	return queueRow(p, pgx.RowToStructByPos[VoucherRedemptionGetRow], func(q *Queries) { q.VoucherRedemptionGet(recording, arg) })
}

// AccessCodeUseGet queues Queries.AccessCodeUseGet.
func (p *Pipeline) AccessCodeUseGet(arg AccessCodeUseGetParams) *Row[AccessCodeUseGetRow] {
	return queueRow(p, pgx.RowToStructByPos[AccessCodeUseGetRow], func(q *Queries) { q.AccessCodeUseGet(recording, arg) })
}
