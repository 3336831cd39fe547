package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/staff"
)

// TestStaffPage: an admin adds an account (a bad one is refused, naming the field,
// with nothing written), changes its role and disables it; the member feels each
// change on the next request; every change is in the audit log with before and after;
// an admin cannot change their own role.
func TestStaffPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	admin, me := a.staffClient(t, staff.Admin)
	a.cheapHashing()
	accounts := func() int { return count(t, a.Pool, `SELECT count(*) FROM staff`) }
	n := accounts()

	for name, f := range map[string]url.Values{
		"short password": {"name": {"Sam"}, "email": {"sam@example.com"}, "role": {"door"}, "password": {"short"}},
		"bad email":      {"name": {"Sam"}, "email": {"not-an-email"}, "role": {"door"}, "password": {staffPassword}},
		"no such role":   {"name": {"Sam"}, "email": {"sam@example.com"}, "role": {"owner"}, "password": {staffPassword}},
	} {
		f.Set("_csrf", admin.csrf)
		r := admin.postForm("/admin/staff", f, false)
		if r.status != http.StatusUnprocessableEntity || r.doc.Find(".error").Length() == 0 {
			t.Errorf("%s: status %d, want 422 with the reason shown", name, r.status)
		}
	}
	if got := accounts(); got != n {
		t.Fatalf("refused forms wrote %d accounts", got-n)
	}

	r := admin.postForm("/admin/staff", url.Values{"_csrf": {admin.csrf}, "name": {"Sam <b>Door</b>"},
		"email": {"Sam@Example.com"}, "role": {"box_office"}, "password": {staffPassword}}, false)
	if r.status != http.StatusOK || !strings.Contains(r.doc.Find(".notice").Text(), "added") {
		t.Fatalf("add: status %d", r.status)
	}
	if strings.Contains(r.body, "<b>Door</b>") {
		t.Error("markup in a staff name is rendered as markup")
	}
	var id int64
	if err := a.Pool.QueryRow(t.Context(), `SELECT id FROM staff WHERE email = 'sam@example.com'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	sam := a.newClient(t)
	if st := sam.login("sam@example.com", staffPassword); st != http.StatusSeeOther {
		t.Fatalf("the new account's login: %d", st)
	}

	path := "/admin/staff/" + itoa(id)
	if r := admin.postForm(path+"/role", url.Values{"_csrf": {admin.csrf}, "role": {"door"}}, false); r.status != http.StatusOK {
		t.Fatalf("role change: %d", r.status)
	}
	if r := admin.postForm(path+"/role", url.Values{"_csrf": {admin.csrf}, "role": {"owner"}}, false); r.status != http.StatusUnprocessableEntity {
		t.Errorf("role change to no such role: %d, want 422", r.status)
	}
	if st := admin.postForm("/admin/staff/"+itoa(me.ID)+"/role", url.Values{"_csrf": {admin.csrf}, "role": {"door"}}, false).status; st != http.StatusConflict {
		t.Errorf("changing one's own role: %d, want 409", st)
	}
	if r := admin.postForm(path+"/disable", url.Values{"_csrf": {admin.csrf}}, false); r.status != http.StatusOK {
		t.Fatalf("disable: %d", r.status)
	}
	if st := sam.page("/admin", false).status; st != http.StatusSeeOther {
		t.Errorf("the disabled member's next request: %d, want 303 to the login", st)
	}
	if st := sam.login("sam@example.com", staffPassword); st != http.StatusUnauthorized {
		t.Errorf("the disabled member's login: %d, want 401", st)
	}

	log := admin.page("/admin/audit", false)
	if log.status != http.StatusOK {
		t.Fatalf("audit log: %d", log.status)
	}
	text := strings.Join(strings.Fields(log.doc.Find("tbody").Text()), " ")
	// In words: what was done, the fields changed, never the codes or the JSON.
	for _, want := range []string{"Account added by", "Role changed by", "Account disabled by", "Role: Box office → Door", "Disabled: no → yes"} {
		if !strings.Contains(text, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
	for _, raw := range []string{"staff.add", "staff.role", "box_office", `"role"`, "{"} {
		if strings.Contains(text, raw) {
			t.Errorf("audit log shows the raw %s", raw)
		}
	}
	if strings.Contains(log.body, "argon2id") {
		t.Error("the audit log shows a password hash")
	}
}
