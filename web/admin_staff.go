package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/audittext"
	"boxoffice/internal/staff"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// The staff page (admins only): accounts, roles, disabling, and the audit log. A
// change takes effect on the member's next request on every instance
// (requireStaff reads the account each time).

func roleOptions() []views.RoleOption {
	out := make([]views.RoleOption, len(staff.Roles))
	for i, r := range staff.Roles {
		out[i] = views.RoleOption{Value: string(r), Label: r.Label()}
	}
	return out
}

// staffView is the staff page with a notice or an error and the add form's values.
func (s *server) staffView(c echo.Context, status int, notice, problem string, form views.NewStaffForm) error {
	members, err := s.Staff.List(c.Request().Context())
	if err != nil {
		return err
	}
	loc, err := s.Catalog.HouseZone(c.Request().Context())
	if err != nil {
		return err
	}
	me := currentStaff(c)
	v := views.StaffList{AdminPage: adminPage(c, "Staff"), Roles: roleOptions(), Form: form, Notice: notice, Error: problem}
	if v.Form.Role == "" {
		v.Form.Role = string(staff.BoxOffice)
	}
	for _, m := range members {
		v.Members = append(v.Members, views.StaffRow{ID: m.ID, Email: m.Email, Name: m.Name, Role: string(m.Role),
			Disabled: m.Disabled, Self: m.ID == me.ID, Since: zone.Day(m.CreatedAt, loc)})
	}
	return render(c, status, "no-store", views.AdminStaffPage(v))
}

func (s *server) showStaff(c echo.Context) error {
	return s.staffView(c, http.StatusOK, "", "", views.NewStaffForm{})
}

// addStaff creates an account from the form; a wrong field is a 422 naming it, and
// nothing is created.
func (s *server) addStaff(c echo.Context) error {
	form := views.NewStaffForm{Email: c.FormValue("email"), Name: c.FormValue("name"), Role: c.FormValue("role")}
	m, err := s.Staff.Add(c.Request().Context(), staff.NewMember{Email: form.Email, Name: form.Name,
		Role: staff.Role(form.Role), Password: c.FormValue("password")})
	var invalid *staff.InvalidError
	switch {
	case errors.As(err, &invalid):
		return s.staffView(c, http.StatusUnprocessableEntity, "", "Not added: the "+invalid.Field+" "+invalid.Reason+".", form)
	case errors.Is(err, staff.ErrExists):
		return s.staffView(c, http.StatusConflict, "", "Not added: an account with this email exists.", form)
	case err != nil:
		return err
	}
	if err := s.audit(c, "staff.add", staffSubject(m.ID), nil, staffAudit(m)); err != nil {
		return err
	}
	return s.staffView(c, http.StatusOK, fmt.Sprintf("%s added as %s.", m.Name, m.Role.Label()), "", views.NewStaffForm{})
}

// staffTarget is the account a change names; changing one's own role or account is
// refused, so an admin cannot lock the last admin out by mistake.
func (s *server) staffTarget(c echo.Context) (int64, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return 0, err
	}
	if id == currentStaff(c).ID {
		return 0, &apiError{Status: http.StatusConflict, Code: "own_account",
			Message: "You cannot change your own role or disable yourself; ask another admin."}
	}
	return id, nil
}

func (s *server) setStaffRole(c echo.Context) error {
	id, err := s.staffTarget(c)
	if err != nil {
		return err
	}
	before, after, err := s.Staff.SetRole(c.Request().Context(), id, staff.Role(c.FormValue("role")))
	if err != nil {
		return staffError(err)
	}
	if err := s.audit(c, "staff.role", staffSubject(id), staffAudit(before), staffAudit(after)); err != nil {
		return err
	}
	return s.staffView(c, http.StatusOK, fmt.Sprintf("%s is now %s.", after.Name, after.Role.Label()), "", views.NewStaffForm{})
}

func (s *server) setStaffDisabled(disabled bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := s.staffTarget(c)
		if err != nil {
			return err
		}
		before, after, err := s.Staff.SetDisabled(c.Request().Context(), id, disabled)
		if err != nil {
			return staffError(err)
		}
		action, notice := "staff.enable", after.Name+" can log in again."
		if disabled {
			action, notice = "staff.disable", after.Name+" is disabled and logged out everywhere."
		}
		if err := s.audit(c, action, staffSubject(id), staffAudit(before), staffAudit(after)); err != nil {
			return err
		}
		return s.staffView(c, http.StatusOK, notice, "", views.NewStaffForm{})
	}
}

func staffError(err error) error {
	var invalid *staff.InvalidError
	switch {
	case errors.Is(err, staff.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: "not_found", Message: "No such staff account."}
	case errors.As(err, &invalid):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: "invalid_" + invalid.Field, Message: "The " + invalid.Field + " " + invalid.Reason + "."}
	}
	return err
}

func staffSubject(id int64) string { return "staff " + strconv.FormatInt(id, 10) }

// staffAudit is what the audit log keeps of an account: never the password hash.
func staffAudit(m staff.Member) map[string]any {
	return map[string]any{"email": m.Email, "name": m.Name, "role": m.Role, "disabled": m.Disabled}
}

// auditPageSize is how many entries the audit log shows at a time.
const auditPageSize = 100

func (s *server) showAudit(c echo.Context) error {
	var before int64
	if b := c.QueryParam("before"); b != "" {
		var err error
		if before, err = strconv.ParseInt(b, 10, 64); err != nil || before <= 0 {
			return badRequest("invalid_cursor", "That is not a position in the audit log.")
		}
	}
	entries, err := s.Staff.AuditLog(c.Request().Context(), before, auditPageSize)
	if err != nil {
		return err
	}
	loc, err := s.Catalog.HouseZone(c.Request().Context())
	if err != nil {
		return err
	}
	v := views.AuditLog{AdminPage: adminPage(c, "Audit log")}
	w := s.words(loc)
	for _, e := range entries {
		who := e.StaffName
		if e.StaffID == 0 {
			who = ""
		}
		sentence, changes := auditView(w, audittext.Entry{Action: e.Action, Subject: e.Subject, Who: who, At: e.At,
			Before: e.Before, After: e.After})
		v.Entries = append(v.Entries, views.AuditRow{At: zone.Stamp(e.At, loc), Sentence: sentence,
			Subject: audittext.Subject(e.Subject), Changes: changes, Address: e.Address})
	}
	if len(entries) == auditPageSize {
		v.Older = "/admin/audit?before=" + strconv.FormatInt(entries[len(entries)-1].ID, 10)
	}
	return render(c, http.StatusOK, "no-store", views.AdminAuditPage(v))
}
