package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/catalog"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/staff"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// errVenueNotFound answers an id that names no venue.
var errVenueNotFound = &apiError{Status: http.StatusNotFound, Code: "venue_not_found", Message: "No such venue."}

// maxFormText bounds each text field of the admin forms: a price list of a big section
// fits many times over.
const maxFormText = 10_000

// listVenues lists the venues; admins get the way to a new one.
func (s *server) listVenues(c echo.Context) error {
	venues, err := s.Catalog.Venues(c.Request().Context())
	if err != nil {
		return err
	}
	p := views.AdminVenues{AdminPage: adminPage(c, "Venues"), CanEdit: currentStaff(c).Role == staff.Admin}
	for _, v := range venues {
		p.Venues = append(p.Venues, views.AdminVenueRow{ID: v.ID, Name: v.Name, City: v.City,
			Seats: ordertext.Thousands(v.Seats), Standing: ordertext.Thousands(v.Standing), Events: strconv.Itoa(v.Events),
			URL: venueURL(v.ID)})
	}
	return render(c, http.StatusOK, "no-store", views.AdminVenuesPage(p))
}

func venueURL(id int64) string { return "/admin/venues/" + strconv.FormatInt(id, 10) }

// newVenue is the empty layout editor, in the zone the other venues share (else UTC).
func (s *server) newVenue(c echo.Context) error {
	house, err := s.Catalog.HouseZone(c.Request().Context())
	if err != nil {
		return err
	}
	e := s.venueEditor(c, "New venue", "/admin/venues", catalog.VenueInput{TimeZone: house.String()})
	e.Preview.Summary = "Fill in a section or a standing area to see the map."
	return render(c, http.StatusOK, "no-store", views.VenueEditorPage(e))
}

// showVenue is an existing venue in the editor; members who are not admins see it
// without the means to change it.
func (s *server) showVenue(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	v, err := s.Catalog.Venue(c.Request().Context(), id)
	if errors.Is(err, catalog.ErrVenueNotFound) {
		return errVenueNotFound
	} else if err != nil {
		return err
	}
	e := s.venueEditor(c, v.Name, venueURL(id), v.VenueInput)
	e.Preview = previewOf(s.Money, v.Layout, venueURL(id))
	if c.QueryParam("saved") != "" {
		e.Notice = "Saved. Events created from now on get this layout; existing events keep their seats."
	}
	if e.CanEdit {
		e.NewEventURL = "/admin/events/new?venue=" + strconv.FormatInt(id, 10)
	}
	return render(c, http.StatusOK, "no-store", views.VenueEditorPage(e))
}

// createVenue previews or saves a new venue.
func (s *server) createVenue(c echo.Context) error {
	return s.saveVenue(c, 0)
}

// updateVenue previews or saves an existing venue's layout.
func (s *server) updateVenue(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	return s.saveVenue(c, id)
}

// saveVenue reads the editor. action=preview draws the layout (for htmx, only the
// preview); otherwise the venue is saved and the browser sent to it. Bad input is a
// 400 with the editor and its message, and changes nothing.
func (s *server) saveVenue(c echo.Context, id int64) error {
	ctx := c.Request().Context()
	action, heading := "/admin/venues", "New venue"
	if id != 0 {
		old, err := s.Catalog.Venue(ctx, id)
		if errors.Is(err, catalog.ErrVenueNotFound) {
			return errVenueNotFound
		} else if err != nil {
			return err
		}
		action, heading = venueURL(id), old.Name
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	in, lf, err := readVenueForm(form)
	if err != nil {
		return err
	}
	lf.Money = s.Money
	layout, perr := lf.Parse()
	if perr == nil {
		in.Layout = layout
	}
	e := s.venueEditor(c, heading, action, in)
	e.Sections, e.GA = sectionFields(lf), gaFields(lf)
	e.Preview = previewOf(s.Money, layout, action)
	if perr != nil {
		e.Preview = views.LayoutPreview{URL: action, Error: problem(perr)}
	}
	if form.Get("action") == "preview" {
		status := http.StatusOK
		if perr != nil {
			status = http.StatusUnprocessableEntity
		}
		if isHTMX(c) {
			return render(c, status, "no-store", views.LayoutPreviewView(e.Preview))
		}
		e.Error = e.Preview.Error
		return render(c, status, "no-store", views.VenueEditorPage(e))
	}
	if perr == nil {
		by := catalog.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()}
		if id == 0 {
			id, perr = s.Catalog.CreateVenue(ctx, by, in)
		} else {
			perr = s.Catalog.UpdateVenue(ctx, by, id, in)
		}
	}
	var inv *catalog.InvalidError
	if errors.As(perr, &inv) {
		e.Error = problem(perr)
		return render(c, http.StatusBadRequest, "no-store", views.VenueEditorPage(e))
	} else if errors.Is(perr, catalog.ErrVenueNotFound) {
		return errVenueNotFound
	} else if perr != nil {
		return perr
	}
	return c.Redirect(http.StatusSeeOther, venueURL(id)+"?saved=1")
}

// problem is an input error in words for the page.
func problem(err error) string {
	var inv *catalog.InvalidError
	if errors.As(err, &inv) {
		return inv.Message + "."
	}
	return err.Error()
}

// readVenueForm reads the editor's fields: name, city, sections s0., s1., … and
// standing areas g0., g1., … as long as each has its name field.
func readVenueForm(form url.Values) (catalog.VenueInput, catalog.LayoutForm, error) {
	var lf catalog.LayoutForm
	for key, vals := range form {
		for _, v := range vals {
			if err := cleanText("field", v, maxFormText); err != nil {
				return catalog.VenueInput{}, lf, badRequest("invalid_form", fmt.Sprintf("%s is too long or contains characters that are not allowed.", key))
			}
		}
	}
	in := catalog.VenueInput{Name: form.Get("name"), City: form.Get("city"), TimeZone: form.Get("time_zone")}
	for i := 0; form.Has(fmt.Sprintf("s%d.name", i)); i++ {
		if i >= catalog.MaxSections+1 {
			return in, lf, badRequest("too_many_sections", fmt.Sprintf("A venue has at most %d sections.", catalog.MaxSections))
		}
		p := fmt.Sprintf("s%d.", i)
		lf.Sections = append(lf.Sections, catalog.SectionForm{
			Name: form.Get(p + "name"), Rows: form.Get(p + "rows"), Seats: form.Get(p + "seats"),
			Curved: form.Get(p+"curved") == "on", Prices: form.Get(p + "prices"),
			Accessible: form.Get(p + "accessible"), Companion: form.Get(p + "companion"),
		})
	}
	for i := 0; form.Has(fmt.Sprintf("g%d.name", i)); i++ {
		if i >= catalog.MaxGAAreas+1 {
			return in, lf, badRequest("too_many_areas", fmt.Sprintf("A venue has at most %d standing areas.", catalog.MaxGAAreas))
		}
		p := fmt.Sprintf("g%d.", i)
		lf.GA = append(lf.GA, catalog.GAForm{Name: form.Get(p + "name"), Capacity: form.Get(p + "capacity"), Price: form.Get(p + "price")})
	}
	return in, lf, nil
}

// venueEditor is the editor filled with a venue, plus a blank section and area.
func (s *server) venueEditor(c echo.Context, heading, action string, v catalog.VenueInput) views.VenueEditor {
	lf := v.Layout.Form(s.Money)
	e := views.VenueEditor{AdminPage: adminPage(c, heading), Heading: heading, Action: action, Name: v.Name, City: v.City,
		TimeZone: v.TimeZone, Zones: zone.Names(),
		CanEdit: currentStaff(c).Role == staff.Admin, Sections: sectionFields(lf), GA: gaFields(lf)}
	e.Preview.URL = action
	return e
}

// sectionFields are the form's sections as typed, blank ones dropped, and one blank
// to add another.
func sectionFields(lf catalog.LayoutForm) []views.SectionFields {
	var out []views.SectionFields
	for _, s := range lf.Sections {
		if s == (catalog.SectionForm{Curved: s.Curved}) {
			continue
		}
		out = append(out, views.SectionFields{Index: len(out), Name: s.Name, Rows: s.Rows, Seats: s.Seats,
			Prices: s.Prices, Accessible: s.Accessible, Companion: s.Companion, Curved: s.Curved})
	}
	return append(out, views.SectionFields{Index: len(out), Curved: true})
}

func gaFields(lf catalog.LayoutForm) []views.GAFields {
	var out []views.GAFields
	for _, g := range lf.GA {
		if g == (catalog.GAForm{}) {
			continue
		}
		out = append(out, views.GAFields{Index: len(out), Name: g.Name, Capacity: g.Capacity, Price: g.Price})
	}
	return append(out, views.GAFields{Index: len(out)})
}

// previewTiers is how many tier colours admin.css has; further tiers reuse them.
const previewTiers = 6

// previewOf draws a layout as the seat map would: every seat at its generated place.
func previewOf(shop money.Shop, l catalog.Layout, url string) views.LayoutPreview {
	p := views.LayoutPreview{URL: url}
	seats, err := l.Seats()
	if err != nil {
		if len(l.Sections) == 0 && len(l.GA) == 0 {
			p.Summary = "Fill in a section or a standing area to see the map."
		} else {
			p.Error = problem(err)
		}
		return p
	}
	type tierKey struct {
		name  string
		cents int
	}
	tiers := map[tierKey]int{}
	var accessible, companion int
	minX, minY, maxX, maxY := 1<<30, 1<<30, 0, 0
	first := map[string]views.Caption{}
	for _, st := range seats {
		k := tierKey{st.Tier, st.PriceCents}
		if _, ok := tiers[k]; !ok {
			tiers[k] = len(tiers)
			p.Legend = append(p.Legend, views.PreviewKey{Class: "tier-" + strconv.Itoa(tiers[k]%previewTiers),
				Text: st.Tier + ", " + shop.Format(st.PriceCents)})
		}
		if st.Accessible {
			accessible++
		}
		if st.Companion {
			companion++
		}
		minX, minY, maxX, maxY = min(minX, st.X), min(minY, st.Y), max(maxX, st.X), max(maxY, st.Y)
		lbl, ok := first[st.Section]
		if !ok || st.Y-10 < lbl.Y {
			lbl.Y = st.Y - 10
		}
		if !ok {
			lbl.Text = st.Section
		}
		first[st.Section] = lbl
		p.Seats = append(p.Seats, views.PreviewSeat{X: strconv.Itoa(st.X), Y: strconv.Itoa(st.Y),
			Class: "tier-" + strconv.Itoa(tiers[k]%previewTiers), Accessible: st.Accessible, Companion: st.Companion})
	}
	if accessible > 0 {
		p.Legend = append(p.Legend, views.PreviewKey{Class: "acc", Text: "wheelchair space"})
	}
	if companion > 0 {
		p.Legend = append(p.Legend, views.PreviewKey{Class: "comp", Text: "companion seat"})
	}
	if len(seats) > 0 {
		for _, s := range l.Sections {
			lbl := first[s.Name]
			// The caption sits above the section's middle.
			var sx, n int
			for _, st := range seats {
				if st.Section == s.Name {
					sx += st.X
					n++
				}
			}
			lbl.X = sx / max(1, n)
			p.Labels = append(p.Labels, lbl)
		}
		const pad = 12
		x0, y0 := minX-pad, 0
		w, h := maxX-minX+2*pad, maxY+pad
		p.ViewBox = fmt.Sprintf("%d %d %d %d", x0, y0, w, h)
		p.Width, p.Height = w, h
		p.Stage = &views.Shape{X: minX, Y: 6, W: maxX - minX, H: 16, TextX: (minX + maxX) / 2, TextY: 18, Text: "STAGE"}
	}
	p.Summary = layoutSummary(l, len(seats), len(tiers), accessible, companion)
	return p
}

// layoutSummary says in words what a layout holds.
func layoutSummary(l catalog.Layout, seats, tiers, accessible, companion int) string {
	var parts []string
	if len(l.Sections) > 0 {
		parts = append(parts, fmt.Sprintf("%s in %s, %s", plural(seats, "seat", "seats"),
			plural(len(l.Sections), "section", "sections"), plural(tiers, "price tier", "price tiers")))
		if accessible > 0 || companion > 0 {
			parts = append(parts, fmt.Sprintf("%s and %s", plural(accessible, "wheelchair space", "wheelchair spaces"),
				plural(companion, "companion seat", "companion seats")))
		}
	}
	if len(l.GA) > 0 {
		parts = append(parts, fmt.Sprintf("%s in %s", plural(l.Capacity(), "standing place", "standing places"),
			plural(len(l.GA), "standing area", "standing areas")))
	}
	return strings.Join(parts, "; ") + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return ordertext.Thousands(n) + " " + many
}
