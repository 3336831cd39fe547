package views

// AdminPage is the frame of every admin page: the page, who is logged in and with
// which role (the menu shows what the role may use), and the current path (to mark
// the menu entry).
type AdminPage struct {
	Page
	StaffName string
	Role      string // admin, box_office or door
	Path      string
}

// MenuItem is one entry of the admin menu.
type MenuItem struct {
	Label, URL string
}

// Menu is what the role may use, in order.
func (p AdminPage) Menu() []MenuItem {
	items := []MenuItem{{"Events", "/admin"}}
	switch p.Role {
	case "admin":
		items = append(items, adminMenu...)
		items = append(items, MenuItem{"Staff", "/admin/staff"}, MenuItem{"Audit log", "/admin/audit"})
	case "box_office":
		items = append(items, adminMenu...)
	case "door":
		items = append(items, MenuItem{"Check-in", "/admin/checkin"})
	}
	return items
}

// adminMenu is the box office's part of the menu (an admin's too). Entries are added
// here as their pages land.
var adminMenu = []MenuItem{
	{"Orders", "/admin/orders"},
	{"Check-in", "/admin/checkin"},
}

// LoginForm is the staff login form: what was typed (never the password), where to go
// after, and what went wrong.
type LoginForm struct {
	Email, Next, Error string
}

// AdminEvent is one event in the admin lists.
type AdminEvent struct {
	ID      int64
	Name    string
	Venue   string
	When    string
	OnSale  string
	Public  string // the public page's URL
	Waiting bool   // the waiting room is on
}

// AdminHome is the admin landing page.
type AdminHome struct {
	AdminPage
	Events []AdminEvent
}
