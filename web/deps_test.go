package web_test

import (
	"strings"
	"testing"

	"boxoffice/internal/apptest"
	"boxoffice/web"
)

// TestDepsRequired: New refuses Deps with any part left nil and names each missing
// one, at construction rather than at the first request that needs it; the Deps the
// composition root builds are complete (the control: the check lets a whole program
// through).
func TestDepsRequired(t *testing.T) {
	t.Parallel()
	_, err := web.New(web.Deps{})
	if err == nil {
		t.Fatal("empty Deps: got a handler, want an error")
	}
	for _, name := range []string{"Log", "Metrics", "Ready", "Buyer", "Desk", "Maps", "Sessions", "Staff", "StaffSessions",
		"Catalog", "Door", "Verify", "Queue", "Live", "Load", "Proof", "Redis", "ProviderName"} {
		if !strings.Contains(err.Error(), " "+name+",") && !strings.Contains(err.Error(), " "+name+":") {
			t.Errorf("empty Deps: got %q, want %s named", err, name)
		}
	}

	p := apptest.New(t, apptest.Options{})
	deps := p.WebDeps()
	deps.Live = nil
	if _, err := web.New(deps); err == nil || !strings.Contains(err.Error(), "without Live:") {
		t.Errorf("Deps without the live hub: got %v, want an error naming Live alone", err)
	}
	deps = p.WebDeps()
	deps.Metrics = nil
	deps.Ready = nil
	if _, err := web.New(deps); err == nil || !strings.Contains(err.Error(), "without Metrics, Ready:") {
		t.Errorf("Deps without metrics and readiness: got %v, want an error naming both", err)
	}
	if p.Handler == nil {
		t.Error("the composition root built no handler")
	}
}
