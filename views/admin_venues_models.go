package views

import "strconv"

// AdminVenues is the list of venues.
type AdminVenues struct {
	AdminPage
	Venues  []AdminVenueRow
	CanEdit bool // the member may create venues (admins)
}

// AdminVenueRow is one venue in the list.
type AdminVenueRow struct {
	ID                      int64
	Name, City              string
	Seats, Standing, Events string
	URL                     string
}

// VenueEditor is the layout editor: a new venue, or an existing one.
type VenueEditor struct {
	AdminPage
	Heading string
	Action  string // where the form saves
	Name    string
	City    string
	// TimeZone is the venue's IANA zone; Zones are the names the form offers.
	TimeZone string
	Zones    []string
	// Sections and GA are what was typed, and one blank of each to add another.
	Sections []SectionFields
	GA       []GAFields
	Error    string // what is wrong with the input, shown above the form
	Notice   string // what was just done
	Preview  LayoutPreview
	CanEdit  bool // false: the member may look but not change (not an admin)
	// NewEventURL starts an event at this venue (an existing venue, admins).
	NewEventURL string
}

// SectionFields is one section of the editor; its inputs are named s<Index>.<field>.
type SectionFields struct {
	Index                                            int
	Name, Rows, Seats, Prices, Accessible, Companion string
	Curved                                           bool
}

// Field is the name (and id) of one of the section's inputs.
func (s SectionFields) Field(name string) string { return "s" + strconv.Itoa(s.Index) + "." + name }

// ID is the element id of one of the section's inputs.
func (s SectionFields) ID(name string) string { return "s" + strconv.Itoa(s.Index) + "-" + name }

// Legend is the section's fieldset legend.
func (s SectionFields) Legend() string {
	if s.Name == "" {
		return "New section"
	}
	return "Section " + s.Name
}

// GAFields is one standing area of the editor; its inputs are named g<Index>.<field>.
type GAFields struct {
	Index                 int
	Name, Capacity, Price string
}

// Field is the name of one of the area's inputs.
func (g GAFields) Field(name string) string { return "g" + strconv.Itoa(g.Index) + "." + name }

// ID is the element id of one of the area's inputs.
func (g GAFields) ID(name string) string { return "g" + strconv.Itoa(g.Index) + "-" + name }

// Legend is the area's fieldset legend.
func (g GAFields) Legend() string {
	if g.Name == "" {
		return "New standing area"
	}
	return "Standing area " + g.Name
}

// LayoutPreview is the map the editor's layout would make, drawn as the seat map
// draws it: a dot per seat at its generated position, coloured by price tier, with
// wheelchair spaces and companion seats marked.
type LayoutPreview struct {
	URL     string // where htmx asks for a fresh preview
	Summary string // in words: sections, seats, standing places
	Error   string // why there is no preview
	ViewBox string
	Width   int
	Height  int
	Stage   *Shape
	Seats   []PreviewSeat
	Labels  []Caption // section names
	Legend  []PreviewKey
}

// PreviewSeat is one seat of the preview.
type PreviewSeat struct {
	X, Y       string
	Class      string // tier-N
	Accessible bool
	Companion  bool
}

// PreviewKey explains one colour or mark of the preview.
type PreviewKey struct {
	Class string
	Text  string
}

// EventEditor is the form of a new event or of an existing one.
type EventEditor struct {
	AdminPage
	Heading string
	Action  string
	ID      int64 // 0 for a new event
	// Venues to choose from (new events); Venue names the venue of an existing one.
	Venues       []Option
	Venue        string
	Name         string
	Slug         string
	StartsAt     string // datetime-local, on the venue's clocks
	OnsaleAt     string
	SalesCloseAt string
	// Zone names the zone the times are typed in ("Europe/Berlin"); the texts say
	// an existing event's times back with their abbreviation, which tells the two
	// passes of an hour the clocks go back over apart.
	Zone                              string
	StartsText, OnsaleText, CloseText string
	HoldMinutes                       string
	QueueEnabled                      bool
	QueueSlots                        string
	QueueRate                         string
	QueueMinutes                      string // the admission's lifetime
	// QueueIdleMinutes is how long an admission lasts with nothing held.
	QueueIdleMinutes string
	// VerifiedOnly asks buyers to confirm an email first; Verified says how many
	// registered and confirmed (an existing event that asks).
	VerifiedOnly bool
	Verified     string
	Published    bool
	Seats        string // how many seats its inventory has
	PublicURL    string
	PublishURL   string // where publish/unpublish posts
	Error        string
	Notice       string
}
