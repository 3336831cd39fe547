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
		items = append(items, MenuItem{"New event", "/admin/events/new"})
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
	{"Venues", "/admin/venues"},
	{"Orders", "/admin/orders"},
	{"Till", "/admin/till"},
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
	// Unpublished events are absent from the public pages; Edit is the event's form
	// (admins only).
	Unpublished bool
	Edit        string
	Sell        string // the box office's seat map; empty for a role that may not sell
}

// AdminHome is the admin landing page: the sales, then the events.
type AdminHome struct {
	AdminPage
	Sales  SalesDashboard
	Events []AdminEvent
}

// StaffRow is one account on the staff page.
type StaffRow struct {
	ID       int64
	Email    string
	Name     string
	Role     string
	Disabled bool
	Self     bool // the member looking: no disabling or demoting oneself
	Since    string
}

// StaffList is the staff page: the accounts, the add form and what just happened.
type StaffList struct {
	AdminPage
	Members []StaffRow
	Roles   []RoleOption
	Form    NewStaffForm
	Notice  string
	Error   string
}

// RoleOption is a role in a select.
type RoleOption struct{ Value, Label string }

// NewStaffForm is what was typed in the add form (never the password).
type NewStaffForm struct{ Email, Name, Role string }

// AuditRow is one line of the audit log: when, what was done in a sentence, to what,
// from where, and the fields it changed.
type AuditRow struct {
	At, Sentence, Subject, Address string
	Changes                        []AuditChange
}

// AuditLog is the audit log page, newest first, a page at a time.
type AuditLog struct {
	AdminPage
	Entries []AuditRow
	Older   string // the next page's URL, "" at the end
}

// Chart is a server-rendered SVG chart: bars on the left axis, a line on the right
// (a share, 0–100 %), and a title and description for screen readers.
type Chart struct {
	Width, Height            int
	Left, Top, Right, Bottom int // the plot area
	Bars                     []ChartBar
	Line                     string // SVG polyline points, "" for none
	YTicks, PctTicks, XTicks []ChartTick
	Title, Desc              string
}

// ChartBar is one bar, positioned; Label is its tooltip.
type ChartBar struct{ X, Y, W, H, Label string }

// ChartTick is an axis label at a position.
type ChartTick struct{ Pos, Label string }

// ControlFigures are the control room's live figures: the part the stream sends again.
type ControlFigures struct {
	EventID                 int64
	Capacity, Sold, SoldPct int
	Held, LiveHolds, Orders int
	Revenue                 string
	PerMinute               int    // tickets in the last minute
	ConflictRate            string // 409s a minute on this server, "–" until measured
	QueueOn, Paused         bool
	QueueKnown              bool
	QueueError              string
	Waiting, Active, Slots  int
	RateSetting             string
	// Lapsed is how many admissions lapsed with no seat held (after Idle), Reused how
	// many of the queue went in to the slots those gave back.
	Lapsed, Reused int
	Idle           string // the idle window in words, e.g. "3 minutes"
	// RateNow is the rate the room admits at while the server holds it below the
	// setting (its latency past LATENCY_BOUND); empty at the setting.
	RateNow string
	// Verified: the onsale is for verified buyers; Registered addresses registered
	// for it, Confirmed of them confirmed.
	Verified              bool
	Registered, Confirmed int
	Updated               string
	Chart                 Chart
	// Presale is the presale's waiting room while it is on (before the public
	// onsale, with codes whose window has not ended); nil otherwise.
	Presale *ControlPresale
}

// ControlPresale is a presale's waiting room in the control room: its queue and
// shoppers (Known false: Redis did not answer), and when it draws and ends.
type ControlPresale struct {
	Known           bool
	Waiting, Active int
	Draw, Ends      string
}

// Control is the control room page.
type Control struct {
	AdminPage
	EventName string
	Stream    string // the figures' SSE address
	Figures   ControlFigures
	Panel     ControlPanel
}

// ControlPanel is the control room's waiting-room controls: pause or resume, shoppers
// at a time and the admission rate, each a form that htmx posts and answers with the
// panel again.
type ControlPanel struct {
	EventID           int64
	CSRF              string
	Paused            bool
	Slots, Rate       string // as set, or as typed when refused
	MaxSlots, MaxRate int
	Notice            string // what the last change did
	Error             string // why the last change was refused
}
