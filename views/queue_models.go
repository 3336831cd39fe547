package views

// QueuePage is one visitor's place in an event's waiting room.
type QueuePage struct {
	Page
	Event  EventHeader
	Status QueueStatus
}

// QueueStatus is the part of the queue page that refreshes itself: it asks its URL
// every few seconds, and the answer replaces it (or moves the browser on to the seat
// page once admitted). Everything in it is already worded for people.
type QueueStatus struct {
	URL      string // where it asks again
	SeatsURL string // the seat page, once admitted
	Paused   bool   // Redis is away: nobody is let in for now
	Admitted bool
	SoldOut  bool
	PreQueue bool   // before the onsale: places are drawn at random then
	AllHeld  bool   // nothing free: everything left is held by people paying
	DrawAt   string // when the draw is, e.g. "10:00 UTC"
	DrawISO  string // the same, for the live countdown
	DrawIn   string // how far ahead it is, e.g. "in 5 minutes"
	Position string // e.g. "3,401"
	Ahead    string // e.g. "3,400 people are ahead of you."
	Wait     string // e.g. "about 4 to 6 minutes"
	Odds     string // e.g. "About 1,200 seats left, 3,400 people ahead of you."
	// Done and Total draw the progress bar: how much of the queue ahead of the visitor
	// when they joined has gone in since. Percent says it in words.
	Done, Total int
	Percent     string
	PollAfter   int // seconds until the page asks again
}
