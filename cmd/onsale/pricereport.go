package main

import (
	"context"
	"fmt"
)

// pricingJSON is what the buyers paid, from the prices their checkouts charged, for
// the orders that ended confirmed: tickets by type, the vouchers, and the money by
// part. SQL is the database's side of it (with -db).
type pricingJSON struct {
	Orders        int            `json:"ordersConfirmed"`
	TicketsByType map[string]int `json:"ticketsByType"`
	TypeBuyers    int            `json:"buyersSettingTypes"`
	TypeCalls     int            `json:"typeCalls"`
	Vouchers      struct {
		Entered  map[string]int `json:"entered"`  // kept until checkout, by code
		Redeemed map[string]int `json:"redeemed"` // on confirmed orders, by code
		Refused  map[string]int `json:"refused"`  // by code and reason
	} `json:"vouchers"`
	RevenueCents  int64     `json:"revenueCents"`
	PricesCents   int64     `json:"pricesCents"`
	FeesCents     int64     `json:"feesCents"`
	DiscountCents int64     `json:"discountCents"`
	TaxCents      int64     `json:"taxCents"`
	TaxLabel      string    `json:"taxLabel"`
	SQL           *moneySQL `json:"sql,omitempty"`
}

// moneySQL is the event's money as its database has it.
type moneySQL struct {
	ConfirmedCents int64        `json:"confirmedOrdersCents"`
	LinesCents     int64        `json:"orderLinesCents"`
	ChargedCents   int64        `json:"chargedCents"`
	RefundedCents  int64        `json:"refundedCents"`
	Vouchers       []voucherSQL `json:"vouchers"`
}

// voucherSQL is a voucher's uses: Limit 0 is none.
type voucherSQL struct {
	Code        string `json:"code"`
	Used        int    `json:"used"`
	Redemptions int    `json:"redemptions"`
	Limit       int    `json:"limit"`
}

// pricingOf sums up the buyers' prices, and says where a confirmed order's amount or
// places are not what its checkout charged for.
func pricingOf(buyers []*buyer, orders map[int]orderJSON) (*pricingJSON, []string) {
	out := &pricingJSON{TicketsByType: map[string]int{}}
	out.Vouchers.Entered, out.Vouchers.Redeemed, out.Vouchers.Refused = map[string]int{}, map[string]int{}, map[string]int{}
	var bad []string
	for i, b := range buyers {
		u := b.price
		if u.typeCalls > 0 {
			out.TypeBuyers++
			out.TypeCalls += u.typeCalls
		}
		if u.refused != "" {
			out.Vouchers.Refused[u.refused]++
		}
		if u.voucher != "" {
			out.Vouchers.Entered[u.voucher]++
		}
		o, ok := orders[i]
		if !ok || o.Status != "confirmed" {
			continue
		}
		if o.AmountCents != u.charged {
			bad = append(bad, fmt.Sprintf("order %d is confirmed for %d cents, its checkout charged %d", o.OrderID, o.AmountCents, u.charged))
		}
		q := u.quote
		places := len(o.Seats)
		if o.GAPlaces != nil {
			places += o.GAPlaces.Quantity
		}
		if len(q.Lines) != places {
			bad = append(bad, fmt.Sprintf("order %d is confirmed with %d places, its checkout priced %d", o.OrderID, places, len(q.Lines)))
		}
		out.Orders++
		for _, l := range q.Lines {
			out.TicketsByType[l.Type]++
		}
		if u.voucher != "" {
			out.Vouchers.Redeemed[u.voucher]++
		}
		out.RevenueCents += u.charged
		out.PricesCents += q.PricesCents
		out.FeesCents += q.FeesCents
		out.DiscountCents += q.DiscountCents
		out.TaxCents += q.TaxCents
		out.TaxLabel = q.TaxLabel
	}
	return out, bad
}

// moneyInvariants are the invariants of the money, in the form of invariants: the
// revenue is what the provider charged less the refunds, in the orders and in their
// lines; a confirmed order's lines sum to its amount, which is what its payment
// charged; no voucher is used beyond its limit, and its count of uses is its
// redemptions.
var moneyInvariants = []invariant{
	{"revenue, order lines and the provider's charges less refunds differ", `
		WITH o AS (SELECT coalesce(sum(amount_cents), 0) AS n FROM orders WHERE event_id = $1 AND status = 'confirmed'),
		     l AS (SELECT coalesce(sum(l.total_cents), 0) AS n FROM order_lines l JOIN orders o ON o.id = l.order_id
		           WHERE l.event_id = $1 AND o.status = 'confirmed'),
		     p AS (SELECT coalesce(sum(p.amount_cents), 0) AS n FROM payments p JOIN orders o ON o.id = p.order_id
		           WHERE o.event_id = $1 AND p.state IN ('succeeded', 'refunded')),
		     r AS (SELECT coalesce(sum(r.amount_cents), 0) AS n FROM refunds r JOIN orders o ON o.id = r.order_id
		           WHERE o.event_id = $1 AND r.state <> 'failed')
		SELECT 'confirmed orders ' || o.n || ' cents, their lines ' || l.n || ', charged ' || p.n || ' less refunds ' || r.n
		FROM o, l, p, r WHERE o.n <> l.n OR o.n <> p.n - r.n`},
	{"a confirmed order whose lines do not sum to its amount", `
		SELECT 'order ' || o.id || ' amounts to ' || o.amount_cents || ' cents, its lines to ' || coalesce(sum(l.total_cents), 0)
		FROM orders o LEFT JOIN order_lines l ON l.event_id = o.event_id AND l.order_id = o.id
		WHERE o.event_id = $1 AND o.status = 'confirmed'
		GROUP BY o.id, o.amount_cents HAVING o.amount_cents <> coalesce(sum(l.total_cents), 0)
		LIMIT 20`},
	{"a confirmed order charged other than its amount", `
		SELECT 'order ' || o.id || ' amounts to ' || o.amount_cents || ' cents, its payment ' || p.id || ' charged ' || p.amount_cents
		FROM orders o JOIN payments p ON p.order_id = o.id
		WHERE o.event_id = $1 AND o.status = 'confirmed' AND p.state = 'succeeded' AND p.amount_cents <> o.amount_cents
		LIMIT 20`},
	{"a voucher used beyond its limit, or its count not its redemptions", `
		SELECT 'voucher ' || v.code || ': ' || n || ' redemptions, ' || v.used || ' uses counted, limit ' || coalesce(v.usage_limit::text, 'none')
		FROM vouchers v,
		     LATERAL (SELECT count(*) AS n FROM voucher_redemptions r WHERE r.event_id = v.event_id AND r.voucher_id = v.id) c
		WHERE v.event_id = $1 AND (n > coalesce(v.usage_limit, n) OR n <> v.used)`},
}

// money reads the event's money and its vouchers' uses.
func (c *sqlCheck) money(ctx context.Context, eventID int64) (*moneySQL, error) {
	m := &moneySQL{}
	err := c.pool.QueryRow(ctx, `SELECT
		(SELECT coalesce(sum(amount_cents), 0) FROM orders WHERE event_id = $1 AND status = 'confirmed'),
		(SELECT coalesce(sum(l.total_cents), 0) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE l.event_id = $1 AND o.status = 'confirmed'),
		(SELECT coalesce(sum(p.amount_cents), 0) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.event_id = $1 AND p.state IN ('succeeded', 'refunded')),
		(SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r JOIN orders o ON o.id = r.order_id WHERE o.event_id = $1 AND r.state <> 'failed')`,
		eventID).Scan(&m.ConfirmedCents, &m.LinesCents, &m.ChargedCents, &m.RefundedCents)
	if err != nil {
		return nil, err
	}
	rows, err := c.pool.Query(ctx, `SELECT v.code, v.used, coalesce(v.usage_limit, 0),
		(SELECT count(*) FROM voucher_redemptions r WHERE r.event_id = v.event_id AND r.voucher_id = v.id)
		FROM vouchers v WHERE v.event_id = $1 ORDER BY v.code`, eventID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var v voucherSQL
		if err := rows.Scan(&v.Code, &v.Used, &v.Limit, &v.Redemptions); err != nil {
			return nil, err
		}
		m.Vouchers = append(m.Vouchers, v)
	}
	return m, rows.Err()
}

// writePricing writes what the buyers paid, and the database's side of it.
func (r *report) writePricing(p printf) {
	k := r.Pricing
	if k == nil {
		return
	}
	p("prices: %d confirmed orders, revenue %s (prices %s, fees %s, less discounts %s; %s %s included); %d buyers set %d seats to a type",
		k.Orders, cents(k.RevenueCents), cents(k.PricesCents), cents(k.FeesCents), cents(k.DiscountCents),
		k.TaxLabel, cents(k.TaxCents), k.TypeBuyers, k.TypeCalls)
	p("  tickets by type: %s", refusals(k.TicketsByType))
	p("  vouchers entered: %s; redeemed on confirmed orders: %s; refused: %s",
		refusals(k.Vouchers.Entered), refusals(k.Vouchers.Redeemed), refusals(k.Vouchers.Refused))
	if m := k.SQL; m != nil {
		p("  in SQL: confirmed orders %s, their lines %s, charged %s less refunds %s",
			cents(m.ConfirmedCents), cents(m.LinesCents), cents(m.ChargedCents), cents(m.RefundedCents))
		for _, v := range m.Vouchers {
			limit := "no limit"
			if v.Limit > 0 {
				limit = fmt.Sprintf("limit %d", v.Limit)
			}
			p("  voucher %s: %d uses (%d redemptions), %s", v.Code, v.Used, v.Redemptions, limit)
		}
	}
}

// cents writes an amount in major units.
func cents(n int64) string { return fmt.Sprintf("%d.%02d", n/100, n%100) }

// moneyAgrees reads the event's money in SQL into k and says where it is not what the
// buyers' confirmed orders paid (they are the event's only buyers).
func (s *sim) moneyAgrees(ctx context.Context, db *sqlCheck, k *pricingJSON) []string {
	m, err := db.money(ctx, s.event.ID)
	if err != nil {
		return []string{"the SQL figures of the money could not be read: " + err.Error()}
	}
	k.SQL = m
	if m.ConfirmedCents != k.RevenueCents {
		return []string{fmt.Sprintf("the confirmed orders amount to %d cents in SQL, the buyers' confirmed checkouts charged %d",
			m.ConfirmedCents, k.RevenueCents)}
	}
	return nil
}
