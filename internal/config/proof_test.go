package config

import (
	"maps"
	"strings"
	"testing"
)

// TestProofOfWork: the proof of work is on unless turned off, at 50,000 unless set,
// and a bad value is named.
func TestProofOfWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  map[string]string
		on   bool
		max  int
		fail string
	}{
		{set: nil, on: true, max: DefaultProofMaxNumber},
		{set: map[string]string{"PROOF_OF_WORK": "off"}, on: false, max: DefaultProofMaxNumber},
		{set: map[string]string{"PROOF_OF_WORK": "on", "PROOF_OF_WORK_MAXNUMBER": "1000"}, on: true, max: 1000},
		{set: map[string]string{"PROOF_OF_WORK": "false"}, on: false, max: DefaultProofMaxNumber},
		{set: map[string]string{"PROOF_OF_WORK": "sometimes"}, fail: "PROOF_OF_WORK="},
		{set: map[string]string{"PROOF_OF_WORK_MAXNUMBER": "0"}, fail: "PROOF_OF_WORK_MAXNUMBER"},
		{set: map[string]string{"PROOF_OF_WORK_MAXNUMBER": "5000000"}, fail: "PROOF_OF_WORK_MAXNUMBER"},
		{set: map[string]string{"PROOF_OF_WORK_MAXNUMBER": "many"}, fail: "PROOF_OF_WORK_MAXNUMBER"},
	} {
		m := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://x"}
		maps.Copy(m, tc.set)
		c, err := Load(env(m))
		switch {
		case tc.fail != "":
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%v: got error %v, want one naming %s", tc.set, err, tc.fail)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.set, err)
		case c.ProofOfWork != tc.on || c.ProofMaxNumber != tc.max:
			t.Errorf("%v: got on=%v max=%d, want on=%v max=%d", tc.set, c.ProofOfWork, c.ProofMaxNumber, tc.on, tc.max)
		}
	}
}
