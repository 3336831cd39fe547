package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"boxoffice/internal/staff"
)

// staffPassword is every test account's password.
const staffPassword = "correct horse battery staple"

var staffSeq atomic.Int64

// addStaff creates an account with role and returns its email. Hashing is made cheap
// for the app's whole life, once, before any account exists.
func (a *testApp) addStaff(t testing.TB, role staff.Role, name string) staff.Member {
	t.Helper()
	a.cheapHashing()
	m, err := a.App.Staff.Add(t.Context(), staff.NewMember{
		Email: "staff" + itoa(staffSeq.Add(1)) + "@example.com", Name: name, Role: role, Password: staffPassword})
	if err != nil {
		t.Fatalf("add staff: %v", err)
	}
	return m
}

func (a *testApp) cheapHashing() {
	a.cheap.Do(a.App.Staff.SetTestParams)
}

// staffClient is a browser logged in as a new member with role.
func (a *testApp) staffClient(t testing.TB, role staff.Role) (*client, staff.Member) {
	t.Helper()
	m := a.addStaff(t, role, "Test "+role.Label())
	c := a.newClient(t)
	if st := c.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Fatalf("login as %s: status %d, want 303", role, st)
	}
	return c, m
}

// login posts the login form and returns the status.
func (c *client) login(email, password string) int {
	c.t.Helper()
	a := c.postForm("/admin/login", url.Values{"email": {email}, "password": {password}, "_csrf": {c.csrf}}, false)
	return a.status
}

// staffCookie is the client's staff session token, "" if none.
func (c *client) staffCookie() string {
	u, _ := url.Parse(c.base + "/admin")
	for _, ck := range c.http.Jar.Cookies(u) {
		if strings.EqualFold(ck.Name, "boxoffice_staff") {
			return ck.Value
		}
	}
	return ""
}
