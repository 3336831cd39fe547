package config

import (
	"fmt"
	"strconv"
)

// The proof of work's difficulty (PROOF_OF_WORK_MAXNUMBER): the secret number is drawn
// from 0 to it, so a browser tries about half as many SHA-256 hashes. Past the maximum
// a phone would take seconds.
const (
	DefaultProofMaxNumber = 50_000
	MaxProofMaxNumber     = 1_000_000
)

// loadProof reads PROOF_OF_WORK (on, the default, or off) and PROOF_OF_WORK_MAXNUMBER.
func loadProof(c *Config, getenv func(string) string) []error {
	var errs []error
	c.ProofOfWork = true
	switch v := getenv("PROOF_OF_WORK"); v {
	case "", "on":
	case "off":
		c.ProofOfWork = false
	default:
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("PROOF_OF_WORK=%q: want on or off", v))
		}
		c.ProofOfWork = b
	}
	c.ProofMaxNumber = DefaultProofMaxNumber
	if v := getenv("PROOF_OF_WORK_MAXNUMBER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxProofMaxNumber {
			errs = append(errs, fmt.Errorf("PROOF_OF_WORK_MAXNUMBER=%q: want a whole number from 1 to %d", v, MaxProofMaxNumber))
		}
		c.ProofMaxNumber = n
	}
	return errs
}
