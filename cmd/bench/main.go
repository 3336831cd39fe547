// Command bench is boxoffice's benchmarks: each measures the real program (built by
// its composition root, served on loopback) next to a ceiling taken in the same run,
// since absolute numbers drift between runs on shared machines and ratios taken side
// by side do not.
//
//	bench holds    exact one-seat holds through the API   vs pgbench running the same conditional UPDATE
//	bench confirm  pay + the webhook's confirmation       vs pgbench running the confirm statements
//	bench best     best available 4, 20,000 seats held    vs the same on a fresh event
//	bench arrive   a new session and a waiting-room join  vs a minimal net/http server doing the same join
//	bench queue    the waiting room's join and position   vs redis-benchmark running the same commands
//	bench sse      the live seat map's fan-out            vs a minimal net/http hub
//
// holds, confirm, best and arrive create the database boxoffice_bench (dropping any
// left over), sse boxoffice_ssebench, next to the one DATABASE_URL names; REDIS_URL
// names the Redis. `make bench` runs them all and sums them up (.ci/bench.sh);
// `bench help <command>` lists a command's flags. pgbench and redis-benchmark must be
// on PATH.
//
// It imports no package of boxoffice but internal/benchkit, which builds and serves the
// real program (internal/layering checks it).
package main

import "boxoffice/internal/benchkit"

const doc = `bench measures boxoffice next to a ceiling taken in the same run.`

func main() { benchkit.Main("bench", doc, commands()...) }

func commands() []benchkit.Command {
	return []benchkit.Command{
		programCommand("holds", "exact one-seat holds through the API, against pgbench running the same UPDATE", holdsBench{}),
		programCommand("confirm", "pay + webhook confirmation through the API, against pgbench running the confirm statements", confirmBench{}),
		programCommand("best", "best available 4 with the cheapest seats held, against a fresh event", bestBench{}),
		programCommand("arrive", "a new session and a waiting-room join, against a minimal net/http server", arriveBench{}),
		{Name: "queue", Summary: "the waiting room's join and position check, against redis-benchmark", Run: runQueue},
		{Name: "sse", Summary: "the live seat map's fan-out to SSE clients, against a minimal net/http hub", Run: runSSE},
	}
}
