// Package views holds the templ components and the plain view models they render. It
// knows nothing of HTTP or the database: handlers fill the models.
//
// It imports only templ and the standard library: never Echo, booking or the database
// packages.
package views

// EventCard is one event in a list.
type EventCard struct {
	Name   string
	Venue  string
	When   string // already formatted for people
	OnSale string
	URL    string // the event's public page
}

// Home is the landing page: the upcoming events, each a way into its event page.
type Home struct {
	Page
	Events []EventCard
}
