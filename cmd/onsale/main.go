// Command onsale is the onsale simulation and the tools that read its runs.
//
//	onsale run     play a crowd of buyers against a running boxoffice and check it
//	onsale replot  draw the chart of an earlier run from its JSON report
//	onsale eta     replay the waits a run's queue showed under other ETA rules
//	onsale reqlog  say where the server's requests spent their time, from its JSON log
//
// `onsale run` plays a crowd of buyers against a running boxoffice over HTTP, as
// their browsers would, and reports what happened with the figures a capacity plan
// needs; then it checks, through the API and (given -db) in SQL, that nothing was sold
// twice and that every paid order has its tickets or its refund.
//
//	onsale run -url http://127.0.0.1:8080 -event stadium-1234 -buyers 20000 [-db postgres://…] [-metrics http://…/metrics]
//
// Each buyer has a session of its own (a cookie jar and its CSRF token), arrives on a
// curve (some early, into the pre-queue; the rest in a burst after the onsale), joins
// the waiting room and waits as the queue page does (following the queue's public
// board, looking itself at its turn and when the server says), and once admitted holds seats
// (of their choice, leaning to the front rows; best available; or standing places;
// some (-basket) hold one seat and add the others one by one), sometimes abandons,
// reads the basket's price, sets a seat to another ticket type (-types) or enters a
// voucher (-voucher; one used up is refused, and the buyer goes on without it), checks
// out, pays with a test card (some declined, some with a late webhook) and waits for
// the tickets. The checks then add the money: what the orders, their lines and the
// provider's charges less refunds say must agree, and no voucher outruns its limit. Some admitted buyers never hold (-idle):
// their turn lapses and goes to the next in line, which the report counts.
//
// The crowd is an outsider: it speaks HTTP (and, for the checks, SQL) and calls no
// code of boxoffice. It drives loopback addresses only unless -allow-host names the
// host, and stops by itself: when every buyer is done, or at -duration, whichever is
// first (checks then get -settle more).
//
// The exit status is 1 when an invariant is broken or a buyer met an answer that is
// no normal part of an onsale (anything but sold out, a declined card, a lost seat and
// "not admitted" before admission), 2 when the run could not be made.
//
// It imports no package of boxoffice but internal/benchkit (internal/layering checks
// it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"boxoffice/internal/benchkit"
)

const doc = `onsale simulates an onsale's crowd against boxoffice and reads its runs.`

func main() { benchkit.Main("onsale", doc, commands()...) }

func commands() []benchkit.Command {
	return []benchkit.Command{
		{Name: "run", Summary: "play a crowd of buyers against a running boxoffice, report and check", Run: runOnsale},
		{Name: "replot", Summary: "draw the chart of an earlier run from its JSON report: replot -svg chart.svg report.json", Run: runReplot},
		{Name: "eta", Summary: "replay the first waits a run's queue showed under other rules for the rate", Run: runETA},
		{Name: "reqlog", Summary: "where the server's requests spent their time, by route, from its JSON request log", Run: runReqlog},
	}
}

// runOnsale is `onsale run`: an error that is no broken invariant ends it with exit
// status 2.
func runOnsale(ctx context.Context, args []string, env benchkit.Env) error {
	err := simulateAndReport(ctx, args, env.Stdout, env.Stderr)
	if err != nil && !errors.Is(err, errViolations) && !errors.Is(err, flag.ErrHelp) {
		return &benchkit.ExitError{Code: 2, Err: err}
	}
	return err
}

func simulateAndReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, jsonPath, svgPath, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	r, err := simulate(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	r.writeText(stdout)
	if jsonPath != "" {
		if err := benchkit.WriteFile(jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}); err != nil {
			return err
		}
	}
	if svgPath != "" {
		if err := benchkit.WriteFile(svgPath, r.writeSVG); err != nil {
			return err
		}
	}
	if r.Failed() {
		return fmt.Errorf("%w: %d violations, %d kinds of error", errViolations, len(r.Violations), len(r.Errors))
	}
	return nil
}

func parseFlags(args []string, stderr io.Writer) (cfg config, jsonPath, svgPath string, err error) {
	fs := flag.NewFlagSet("onsale run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "the boxoffice to drive")
	fs.StringVar(&cfg.Event, "event", "", "the event's slug or id (required)")
	fs.IntVar(&cfg.Buyers, "buyers", 20000, "how many buyers come")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Minute, "hard time limit of the buying")
	fs.DurationVar(&cfg.Settle, "settle", time.Minute, "time limit of the paid orders' settling after the buying, and again of the checks after that")
	fs.StringVar(&cfg.AllowHost, "allow-host", "", "a host other than loopback that may be driven (yours)")
	fs.BoolVar(&cfg.Front, "front", false, "queue through the front door: a signed place, the board, a claim at the turn (no session until admitted)")
	fs.Float64Var(&cfg.Early, "early", 0.3, "share of buyers arriving before the onsale")
	fs.DurationVar(&cfg.EarlyWindow, "early-window", time.Minute, "how long before the onsale early buyers arrive")
	fs.DurationVar(&cfg.Burst, "burst", 15*time.Second, "mean delay after the onsale of the others (exponential, capped at 5x)")
	fs.DurationVar(&cfg.Poll, "poll", 3*time.Second, "how often a waiting buyer's page asks where it stands when the server sets no pace (pollAfterSeconds)")
	fs.DurationVar(&cfg.OrderPoll, "order-poll", time.Second, "how often a paid buyer's order page asks for the tickets (the page's every 1s)")
	fs.DurationVar(&cfg.Think, "think", time.Second, "mean pause of a buyer between two steps")
	fs.DurationVar(&cfg.TicketWait, "ticket-wait", 30*time.Second, "how long a paid buyer waits for the tickets")
	fs.DurationVar(&cfg.MapEvery, "map-every", time.Second, "how often the crowd's seat map is fetched again")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "time limit of one request")
	fs.Float64Var(&cfg.Specific, "specific", 0.5, "share of buyers choosing their seats on the map")
	fs.Float64Var(&cfg.Best, "best", 0.3, "share asking for the best available (the rest: standing places)")
	fs.IntVar(&cfg.MaxQty, "max-qty", 6, "a buyer wants 1 to this many seats")
	fs.Float64Var(&cfg.Abandon, "abandon", 0.1, "share of holders who leave without paying")
	fs.Float64Var(&cfg.Idle, "idle", 0.05, "share of admitted buyers who never hold (their turn lapses after the event's idle window)")
	fs.Float64Var(&cfg.Basket, "basket", 0.3, "share of buyers wanting seats who hold one, then add the others one by one (POST /holds/{id}/seats)")
	fs.Float64Var(&cfg.Decline, "decline", 0.05, "share paying with a declined card first")
	fs.Float64Var(&cfg.Late, "late", 0.1, "share whose payment webhook comes late")
	fs.Float64Var(&cfg.Types, "types", 0.3, "share of holders who set a seat to another ticket type (a child beside an adult, a concession)")
	fs.Float64Var(&cfg.Voucher, "voucher", 0.3, "share of holders who enter a voucher, one of -voucher-codes (0 for an event without them)")
	codes := fs.String("voucher-codes", benchkit.VoucherPercent+","+benchkit.VoucherLimited, "the vouchers they enter, comma-separated (the price list of seed-stadium -pricing)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "the waiting room's admission rate, to compare (read from -db when given)")
	fs.IntVar(&cfg.Slots, "slots", 0, "the waiting room's shoppers at a time, to compare (read from -db when given)")
	fs.StringVar(&cfg.DB, "db", "", "PostgreSQL URL of the server's database, for the SQL checks")
	fs.BoolVar(&cfg.Keys, "idempotency-keys", true, "send an Idempotency-Key with each hold, add, checkout and pay, and send it once more with the same key after a 502, a 503 or no answer")
	fs.StringVar(&cfg.Metrics, "metrics", "", "the server's Prometheus /metrics URL, to compare counts")
	fs.DurationVar(&cfg.Tidy, "tidy", 2*time.Second, "the server's TIDY_INTERVAL: how long past its expiry a hold may live")
	fs.DurationVar(&cfg.TidyGrace, "tidy-grace", time.Second, "time a tidy-up round itself may take, on top of -tidy")
	fs.IntVar(&cfg.Conns, "conns", 256, "connections to the server at most, for the waiting buyers together")
	fs.IntVar(&cfg.ShopConns, "shop-conns", 2048, "connections to the server at most, for the admitted buyers together: about one for each shopper the room lets in at once (make onsale: 2,000), as their own browsers would have")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "randomness (0: drawn)")
	fs.DurationVar(&cfg.Progress, "progress", 5*time.Second, "how often the progress line is printed")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the simulator's own CPU profile to this file (it shares the machine)")
	fs.StringVar(&cfg.Trace, "trace", "", "write one CSV line per buyer to this file (joined, admitted, first ETA)")
	fs.StringVar(&jsonPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&svgPath, "svg", "", "write the chart as SVG to this file")
	if err = fs.Parse(args); err != nil {
		return
	}
	for c := range strings.SplitSeq(*codes, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cfg.Codes = append(cfg.Codes, c)
		}
	}
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.Event == "":
		err = errors.New("-event is required")
	case cfg.Buyers < 1 || cfg.Buyers > 1_000_000:
		err = errors.New("-buyers must be 1 to 1,000,000")
	case cfg.Duration <= 0 || cfg.Duration > 2*time.Hour:
		err = errors.New("-duration must be positive and at most 2h")
	case cfg.Settle <= 0 || cfg.Poll <= 0 || cfg.OrderPoll <= 0 || cfg.MapEvery <= 0 || cfg.Timeout <= 0 || cfg.Progress <= 0 || cfg.TicketWait <= 0:
		err = errors.New("-settle, -poll, -order-poll, -map-every, -timeout, -progress and -ticket-wait must be positive")
	case cfg.MaxQty < 1:
		err = errors.New("-max-qty must be at least 1")
	case cfg.Conns < 1 || cfg.ShopConns < 1:
		err = errors.New("-conns and -shop-conns must be at least 1")
	case !share(cfg.Early) || !share(cfg.Specific) || !share(cfg.Best) || !share(cfg.Specific+cfg.Best) ||
		!share(cfg.Abandon) || !share(cfg.Idle) || !share(cfg.Basket) || !share(cfg.Decline) || !share(cfg.Late) ||
		!share(cfg.Types) || !share(cfg.Voucher):
		err = errors.New("-early, -specific, -best (and their sum), -abandon, -idle, -basket, -decline, -late, -types and -voucher are shares from 0 to 1")
	}
	return
}

// runReplot is `onsale replot`: it draws the chart of an earlier run from its JSON
// report.
func runReplot(_ context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("onsale", "replot", env)
	svgPath := fs.String("svg", "", "the chart's file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *svgPath == "" || fs.NArg() != 1 {
		return errors.New("usage: onsale replot -svg chart.svg report.json (a report of onsale run -json)")
	}
	reportPath := fs.Arg(0)
	b, err := os.ReadFile(reportPath)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: not a report of onsale run -json: %w", reportPath, err)
	}
	return benchkit.WriteFile(*svgPath, r.writeSVG)
}

func share(f float64) bool { return f >= 0 && f <= 1 }
