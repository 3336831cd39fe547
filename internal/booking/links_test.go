package booking

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// linkJobs records the link emails booking queues; the other jobs are dropped.
type linkJobs struct {
	mu    sync.Mutex
	links [][2]int64 // order, version
	lists [][]int64
}

func (*linkJobs) OrderConfirmed(context.Context, pgx.Tx, int64) error         { return nil }
func (*linkJobs) RefundDue(context.Context, pgx.Tx, int64, int) error         { return nil }
func (*linkJobs) OrderRefunded(context.Context, pgx.Tx, int64) error          { return nil }
func (*linkJobs) PaymentRefunded(context.Context, pgx.Tx, int64, int64) error { return nil }
func (j *linkJobs) OrderLinkResend(_ context.Context, _ pgx.Tx, order int64, version int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.links = append(j.links, [2]int64{order, int64(version)})
	return nil
}

func (j *linkJobs) OrderLinks(_ context.Context, _ pgx.Tx, ids []int64, _ string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lists = append(j.lists, ids)
	return nil
}

// TestOrderLinks: a link opens its order only at the order's current version;
// revoking moves the version on (each of revocations at once its own version, none
// lost), resending queues the new version's link, and an unpaid order has no link to
// send. The list of an address's orders names its paid ones, newest first, whatever
// the case the address is typed in, and queues nothing for an address without any.
func TestOrderLinks(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, Config{})
	jobs := &linkJobs{}
	f.svc.SetJobs(jobs)
	ctx := t.Context()
	seats := f.ids(t, `SELECT id FROM seats WHERE event_id = $1 ORDER BY id LIMIT 4`, f.event)
	var paidOrders []int64
	for i, seat := range seats[:2] {
		o := f.checkout(t, f.hold(t, "ann", seat), "ann")
		f.pay(t, o, "evt_links_"+string(rune('a'+i)))
		paidOrders = append(paidOrders, o.ID)
	}
	unpaid := f.checkout(t, f.hold(t, "ann", seats[2]), "ann")
	bob := f.checkout(t, f.hold(t, "bob", seats[3]), "bob")
	f.pay(t, bob, "evt_links_bob")

	if err := f.svc.Buyer.SendOrderLinks(ctx, "  ANN@Example.COM "); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Buyer.SendOrderLinks(ctx, "nobody@example.com"); err != nil {
		t.Fatal(err)
	}
	if want := [][]int64{{paidOrders[1], paidOrders[0]}}; !slices.EqualFunc(jobs.lists, want, slices.Equal) {
		t.Errorf("lists queued: got %v, want %v (ann's paid orders, newest first; none for nobody)", jobs.lists, want)
	}

	id := paidOrders[0]
	if v, err := f.svc.Buyer.OrderLinkVersion(ctx, id); err != nil || v != 1 {
		t.Fatalf("version of a new order: got %d, %v; want 1", v, err)
	}
	if _, err := f.svc.Desk.RevokeOrderLinks(ctx, unpaid.ID, true, Actor{}); !errors.Is(err, ErrNoLinkToSend) {
		t.Errorf("resend for an unpaid order: got %v, want ErrNoLinkToSend", err)
	}
	if v, _ := f.svc.Buyer.OrderLinkVersion(ctx, unpaid.ID); v != 1 {
		t.Errorf("a refused resend moved the version to %d", v)
	}
	if _, err := f.svc.Desk.RevokeOrderLinks(ctx, 1<<40, false, Actor{}); !errors.Is(err, ErrOrderNotFound) {
		t.Errorf("revoking no order: got %v, want ErrOrderNotFound", err)
	}

	const n = 8
	versions := make([]int, n)
	var errs errorCounter
	atOnce(n, func(i int) {
		v, err := f.svc.Desk.RevokeOrderLinks(ctx, id, i == 0, Actor{})
		if err != nil {
			errs.add(err)
		}
		versions[i] = v
	})
	errs.report(t, "revoke")
	slices.Sort(versions)
	for i, v := range versions {
		if v != i+2 {
			t.Fatalf("versions of %d revocations at once: got %v, want 2 to %d, each once", n, versions, n+1)
		}
	}
	if len(jobs.links) != 1 || jobs.links[0][0] != id {
		t.Errorf("resends queued: got %v, want one for order %d", jobs.links, id)
	}
	for v := 1; v <= n+1; v++ {
		_, err := f.svc.Buyer.OrderByLink(ctx, id, v)
		if current := v == n+1; current != (err == nil) {
			t.Errorf("link version %d of %d: got %v", v, n+1, err)
		}
	}
	if _, err := f.svc.Buyer.OrderByLink(ctx, bob.ID, 1); err != nil {
		t.Errorf("another order's link is untouched: got %v", err)
	}
}
