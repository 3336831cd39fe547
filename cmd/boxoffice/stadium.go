package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"boxoffice/internal/demo"
	"boxoffice/internal/pricedemo"
)

// seedStadium creates a big event with its waiting room on and its onsale a little
// ahead, for an onsale simulation (`make onsale` runs cmd/onsale against it). Each run
// sells a fresh event, so the slug is the caller's: a sold-out event is never reused.
// It prints the event's id, slug and onsale as key=value, for scripts.
func seedStadium(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed-stadium", flag.ContinueOnError)
	fs.SetOutput(stdout)
	slug := fs.String("slug", fmt.Sprintf("stadium-%d", time.Now().Unix()), "the new event's slug")
	seats := fs.Int("seats", 50000, "seats, in blocks of 50 rows of 50")
	standing := fs.Int("standing", -1, "places in the standing field (-1: a fifth of the seats)")
	in := fs.Duration("onsale-in", 30*time.Second, "how long from now the onsale is")
	slots := fs.Int("slots", 2000, "waiting room: shoppers at a time")
	rate := fs.Float64("rate", 150, "waiting room: admissions a second")
	ttl := fs.Duration("token-ttl", 5*time.Minute, "waiting room: how long an admission lasts")
	priced := fs.Bool("pricing", true, "give it ticket types (adult, child, concession), fees, tax and two vouchers (internal/pricedemo)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *seats < 1 || *slots < 1 || *rate <= 0 || *ttl < time.Second {
		return errors.New("seed-stadium: -seats, -slots, -rate and -token-ttl must be positive")
	}
	if *standing == 0 || *standing < -1 {
		return errors.New("seed-stadium: -standing must be positive (or -1 for a fifth of the seats)")
	}
	pool, err := seedPool(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	onsale := time.Now().Add(*in).Truncate(time.Second)
	spec := demo.StadiumSpec(*slug, *seats, onsale, demo.Queue{Slots: *slots, Rate: *rate, TokenTTL: *ttl})
	if *standing > 0 {
		spec.GA[0].Capacity = *standing
	}
	id, err := demo.Create(ctx, pool, spec)
	if err != nil {
		return err
	}
	if *priced {
		if _, err := pricedemo.Apply(ctx, pool, id); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "event=%d slug=%s seats=%d places=%d onsale=%s slots=%d rate=%g pricing=%t\n",
		id, spec.Slug, spec.Seats(), spec.GA[0].Capacity, onsale.UTC().Format(time.RFC3339), *slots, *rate, *priced)
	return nil
}
