package main

import (
	"context"
	"net/http"

	"boxoffice/internal/benchkit"
)

// prove solves a challenge as the pages' widget does, here in Go (a few milliseconds
// of a core at the server's default difficulty, which a real crowd spends on its own
// phones), and gives it to the buyer's next call. It reports whether to go on.
func (b *buyer) prove(ctx context.Context) bool {
	var ch benchkit.ProofChallenge
	if !b.call(ctx, "challenge", http.MethodGet, "/api/v1/challenge", nil, &ch) {
		return false
	}
	solved, err := benchkit.SolveProof(ch)
	if err != nil {
		b.sim.count.unexpected("challenge: " + err.Error())
		b.outcome = outFailed
		return false
	}
	b.c.proof = solved
	return true
}
