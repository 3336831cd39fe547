package benchkit

import "boxoffice/internal/proof"

// ProofChallenge is a proof-of-work challenge as GET /api/v1/challenge answers it.
type ProofChallenge = proof.Challenge

// SolveProof solves a challenge as the pages' widget does and returns the payload for
// the X-Altcha header: the simulated crowd pays the proof with the server's own solver.
func SolveProof(ch ProofChallenge) (string, error) { return proof.Solve(ch) }
