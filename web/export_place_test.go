package web

// PlaceJSON is the place calls' answer, for the front door's tests.
type PlaceJSON = placeJSON

// PlaceCookie names an event's place cookie.
func PlaceCookie(eventID int64) string { return placeCookieName(eventID) }
