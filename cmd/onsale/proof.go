package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
)

// challengeJSON is a proof-of-work challenge (GET /api/v1/challenge), in ALTCHA's
// fields: find the number, at most maxnumber, whose decimal digits after the salt
// hash (SHA-256) to challenge.
type challengeJSON struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	MaxNumber int64  `json:"maxnumber"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// solution is the payload the widget sends back, base64 of this JSON.
type solution struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	Number    int64  `json:"number"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// prove solves a challenge as the pages' widget does, here in Go (a few milliseconds
// of a core at the server's default difficulty, which a real crowd spends on its own
// phones), and gives it to the buyer's next call. It reports whether to go on.
func (b *buyer) prove(ctx context.Context) bool {
	var ch challengeJSON
	if !b.call(ctx, "challenge", http.MethodGet, "/api/v1/challenge", nil, &ch) {
		return false
	}
	want, err := hex.DecodeString(ch.Challenge)
	if err != nil || ch.Algorithm != "SHA-256" {
		b.sim.count.unexpected("challenge: not SHA-256")
		b.outcome = outFailed
		return false
	}
	var target [sha256.Size]byte
	copy(target[:], want)
	digits := append(make([]byte, 0, len(ch.Salt)+20), ch.Salt...)
	for n := int64(0); n <= ch.MaxNumber; n++ {
		if sha256.Sum256(strconv.AppendInt(digits, n, 10)) != target {
			continue
		}
		raw, _ := json.Marshal(solution{ch.Algorithm, ch.Challenge, n, ch.Salt, ch.Signature}) // strings and a number always encode
		b.c.proof = base64.StdEncoding.EncodeToString(raw)
		return true
	}
	b.sim.count.unexpected("challenge: no solution up to maxnumber")
	b.outcome = outFailed
	return false
}
