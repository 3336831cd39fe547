package booking

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/demo"
)

// pendingOrders makes n pending orders on the fixture's event, each on a hold of its
// own, for redemptions to name.
func (f fixture) pendingOrders(t *testing.T, n int) []int64 {
	t.Helper()
	return f.ids(t, `WITH h AS (
		INSERT INTO holds (event_id, buyer, expires_at)
		SELECT $1, 'race' || g, now() + interval '1 hour' FROM generate_series(1, $2::int) g RETURNING id, buyer)
	INSERT INTO orders (event_id, hold_id, buyer, email, amount_cents)
	SELECT $1, id, buyer, buyer || '@example.com', 1000 FROM h RETURNING id`, f.event, n)
}

// voucher makes a voucher on the fixture's event with the given extra columns' SQL.
func (f fixture) voucher(t *testing.T, code string, limit int, extra string) int64 {
	t.Helper()
	return f.ids(t, `INSERT INTO vouchers (event_id, code, amount_off_cents, usage_limit, valid_from, valid_until, paused)
		SELECT $1, $2, 500, nullif($3::int, 0), `+extra+` RETURNING id`, f.event, code, limit)[0]
}

const voucherOpen = "NULL::timestamptz, NULL::timestamptz, false"

// raceRedeem runs redeem for every order at once, from one barrier, each in its own
// transaction, and returns how many said yes.
func raceRedeem(t *testing.T, f fixture, orders []int64, redeem func(ctx context.Context, tx pgx.Tx, order int64) (bool, error)) int {
	t.Helper()
	var wins atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, o := range orders {
		wg.Go(func() {
			<-start
			err := pgx.BeginFunc(t.Context(), f.pool, func(tx pgx.Tx) error {
				ok, err := redeem(t.Context(), tx, o)
				if ok {
					wins.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("order %d: %v", o, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(wins.Load())
}

// TestVoucherRedeemRace: forty buyers confirm at once with a voucher limited to five
// uses; exactly five get it, and the counter and the redemptions agree.
func TestVoucherRedeemRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("A", 4, 1000)}), DefaultConfig())
	v := f.voucher(t, "FIVE", 5, voucherOpen)
	orders := f.pendingOrders(t, 40)
	wins := raceRedeem(t, f, orders, func(ctx context.Context, tx pgx.Tx, o int64) (bool, error) {
		return redeemVoucher(ctx, db.New(tx), f.event, v, o, 500)
	})
	var used, redeemed int
	if err := f.pool.QueryRow(t.Context(), `SELECT used, (SELECT count(*) FROM voucher_redemptions WHERE voucher_id = $1)
		FROM vouchers WHERE id = $1`, v).Scan(&used, &redeemed); err != nil {
		t.Fatal(err)
	}
	if wins != 5 || used != 5 || redeemed != 5 {
		t.Fatalf("got %d redemptions said yes, used %d, %d recorded; want 5 each", wins, used, redeemed)
	}
}

// TestVoucherRedeemRaceControl is the negative control: the same race with the limit
// checked by a read before an unconditional write (the guard left out of the
// statement) lets more than five through, so the race above could catch it.
func TestVoucherRedeemRaceControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("A", 4, 1000)}), DefaultConfig())
	v := f.voucher(t, "NAIVE", 5, voucherOpen)
	const n = 12 // every buyer holds a connection at the second barrier: below the pool's 16
	orders := f.pendingOrders(t, n)
	var read sync.WaitGroup
	read.Add(n)
	wins := raceRedeem(t, f, orders, func(ctx context.Context, tx pgx.Tx, o int64) (bool, error) {
		var count, limit int
		err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM voucher_redemptions WHERE voucher_id = $1), usage_limit
			FROM vouchers WHERE id = $1`, v).Scan(&count, &limit)
		read.Done()
		read.Wait() // everyone has read before anyone writes: the interleaving the guard exists for
		if err != nil || count >= limit {
			return false, err
		}
		_, err = tx.Exec(ctx, `INSERT INTO voucher_redemptions (event_id, order_id, voucher_id, discount_cents) VALUES ($1, $2, $3, 500)`, f.event, o, v)
		return err == nil, err
	})
	if wins <= 5 {
		t.Fatalf("got %d redemptions without the guard, want more than the limit of 5", wins)
	}
}

// TestVoucherRedeemRules: a paused, expired or not-yet-valid voucher is refused by the
// database clock, and an order redeems once however often its confirmation runs.
func TestVoucherRedeemRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("A", 4, 1000)}), DefaultConfig())
	orders := f.pendingOrders(t, 2)
	cases := []struct {
		code, extra string
		want        bool
	}{
		{"OPEN", voucherOpen, true},
		{"PAUSED", "NULL::timestamptz, NULL::timestamptz, true", false},
		{"EXPIRED", "now() - interval '2 days', now() - interval '1 second', false", false},
		{"LATER", "now() + interval '1 hour', NULL::timestamptz, false", false},
		{"VALID", "now() - interval '1 hour', now() + interval '1 hour', false", true},
	}
	for i, tc := range cases {
		v := f.voucher(t, tc.code, 0, tc.extra)
		order := orders[i%2]
		f.pool.Exec(t.Context(), `DELETE FROM voucher_redemptions WHERE order_id = $1`, order)
		got, err := redeemVoucher(t.Context(), f.svc.store.q, f.event, v, order, 500)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v (%v), want %v", tc.code, got, err, tc.want)
		}
	}
	v := f.voucher(t, "TWICE", 3, voucherOpen)
	f.pool.Exec(t.Context(), `DELETE FROM voucher_redemptions WHERE order_id = $1`, orders[0])
	first, err1 := redeemVoucher(t.Context(), f.svc.store.q, f.event, v, orders[0], 500)
	again, err2 := redeemVoucher(t.Context(), f.svc.store.q, f.event, v, orders[0], 500)
	var used int
	f.pool.QueryRow(t.Context(), `SELECT used FROM vouchers WHERE id = $1`, v).Scan(&used)
	if err1 != nil || err2 != nil || !first || again || used != 1 {
		t.Fatalf("redeemed twice for one order: got %v then %v (%v, %v), used %d; want true, false, used 1", first, again, err1, err2, used)
	}
}

// TestAccessCodeQuotaRace: ten orders of two places race for a code with a quota of
// five: exactly two fit, and the places counted are four.
func TestAccessCodeQuotaRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("A", 4, 1000)}), DefaultConfig())
	code := f.ids(t, `INSERT INTO access_codes (event_id, code, presale_starts_at, presale_ends_at, quota)
		VALUES ($1, 'PRE', now() - interval '1 hour', now() + interval '1 hour', 5) RETURNING id`, f.event)[0]
	orders := f.pendingOrders(t, 10)
	wins := raceRedeem(t, f, orders, func(ctx context.Context, tx pgx.Tx, o int64) (bool, error) {
		return useAccessCode(ctx, db.New(tx), f.event, code, o, 2)
	})
	var used int
	if err := f.pool.QueryRow(t.Context(), `SELECT places_used FROM access_codes WHERE id = $1`, code).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if wins != 2 || used != 4 {
		t.Fatalf("got %d uses and %d places, want 2 and 4", wins, used)
	}
}
