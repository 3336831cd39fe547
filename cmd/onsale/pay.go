package main

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// pay pays the order: with a declined card for some buyers, half of whom then try a
// good card; with a late webhook for others.
func (b *buyer) pay(ctx context.Context) bool {
	s := b.sim
	card := cardGood
	if b.rng.Float64() < s.cfg.Decline {
		card = cardDeclined
	}
	delivery := ""
	if b.rng.Float64() < s.cfg.Late {
		delivery = "late"
	}
	for {
		b.think(ctx)
		if ctx.Err() != nil {
			b.outcome = outCut
			return false
		}
		var p payJSON
		a, ok := b.send(ctx, "pay", http.MethodPost, "/api/v1/orders/"+strconv.FormatInt(b.orderID, 10)+"/pay",
			map[string]string{"card": card, "delivery": delivery}, &p)
		if !ok {
			// The call went out: the server may have taken the charge all the same.
			b.payUnanswered = true
			return false
		}
		switch {
		case a.Status == http.StatusAccepted:
			b.paid = true
			return true
		case a.Status == http.StatusPaymentRequired && a.Err.Code == "card_declined":
			s.count.expected("pay: card declined")
			if card == cardGood || b.rng.IntN(2) == 0 {
				b.outcome = outDeclined
				return false
			}
			card = cardGood
		case a.Status == http.StatusGone:
			b.outcome = outExpired
			return false
		default:
			b.fail("pay", a)
			return false
		}
	}
}

// waitTickets polls the order, as its page does, until the payment's webhook has
// confirmed it (or sent it to a refund), within the ticket wait.
func (b *buyer) waitTickets(ctx context.Context, places int) {
	s := b.sim
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.TicketWait)
	defer cancel()
	for {
		var o orderJSON
		a, ok := b.try(ctx, "order", http.MethodGet, "/api/v1/orders/"+strconv.FormatInt(b.orderID, 10), nil, &o)
		if !ok {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && b.outcome == outCut {
				b.outcome = outUnsettled
			}
			return
		}
		if a.Status != http.StatusOK {
			b.fail("order", a)
			return
		}
		switch o.Status {
		case "confirmed":
			s.latency("tickets", time.Since(start))
			s.count.event("sale")
			s.gauge.sold.Add(int64(places))
			b.outcome = outBought
			return
		case "refunded", "refund_pending", "expired":
			b.outcome = outRefunded
			return
		}
		if !sleep(ctx, s.cfg.OrderPoll) {
			b.outcome = outUnsettled
			return
		}
	}
}
