package web

import (
	"time"

	"boxoffice/internal/audittext"
	"boxoffice/views"
)

// words writes audit entries and codes for staff on the clocks of loc.
func (s *server) words(loc *time.Location) audittext.Words {
	return audittext.Words{Money: s.Money, Zone: loc}
}

// auditView is an audit entry for the pages: its sentence and the fields it changed.
func auditView(w audittext.Words, e audittext.Entry) (string, []views.AuditChange) {
	var out []views.AuditChange
	for _, c := range w.Changes(e.Before, e.After) {
		out = append(out, views.AuditChange{Field: c.Field, Before: c.Before, After: c.After})
	}
	return w.Sentence(e), out
}
