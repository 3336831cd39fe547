package config

import (
	"strings"
	"testing"
)

func TestProofOfWork(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x", "REDIS_URL": "redis://x"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		env  map[string]string
		on   bool
		max  int
		fail string
	}{
		{env: with(), on: true, max: DefaultProofMaxNumber},
		{env: with("PROOF_OF_WORK", "off"), on: false, max: DefaultProofMaxNumber},
		{env: with("PROOF_OF_WORK", "on", "PROOF_OF_WORK_MAXNUMBER", "1000"), on: true, max: 1000},
		{env: with("PROOF_OF_WORK", "false"), on: false, max: DefaultProofMaxNumber},
		{env: with("PROOF_OF_WORK", "sometimes"), fail: "PROOF_OF_WORK="},
		{env: with("PROOF_OF_WORK_MAXNUMBER", "0"), fail: "PROOF_OF_WORK_MAXNUMBER"},
		{env: with("PROOF_OF_WORK_MAXNUMBER", "5000000"), fail: "PROOF_OF_WORK_MAXNUMBER"},
		{env: with("PROOF_OF_WORK_MAXNUMBER", "many"), fail: "PROOF_OF_WORK_MAXNUMBER"},
	} {
		c, err := Load(env(tc.env))
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%v: got error %v, want one naming %s", tc.env, err, tc.fail)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.env, err)
			continue
		}
		if c.ProofOfWork != tc.on || c.ProofMaxNumber != tc.max {
			t.Errorf("%v: got on=%v max=%d, want on=%v max=%d", tc.env, c.ProofOfWork, c.ProofMaxNumber, tc.on, tc.max)
		}
	}
}
