package booking

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// inventoryTable matches a statement that reads or writes an inventory table.
var inventoryTable = regexp.MustCompile(`(?i)\b(FROM|JOIN|UPDATE|INTO)\s+(seats|holds|tickets|ga_stripes|hold_ga_places)\b`)

// TestEveryInventoryStatementNamesItsEvent: every query on seats, holds, tickets and
// GA stock names event_id, so that it touches one event and the schema can be
// distributed by event without rewriting it.
func TestEveryInventoryStatementNamesItsEvent(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../queries/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no query files found (%v)", err)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range strings.Split(string(b), "-- name: ")[1:] {
			name := strings.Fields(q)[0]
			if !inventoryTable.MatchString(q) {
				continue
			}
			checked++
			if !strings.Contains(q, "event_id") {
				t.Errorf("%s: %s touches an inventory table without naming event_id", filepath.Base(f), name)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d queries, want the 20 or more that touch inventory", checked)
	}
}
