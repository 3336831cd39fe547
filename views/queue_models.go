package views

// QueuePage is one visitor's place in an event's waiting room.
type QueuePage struct {
	Page
	Event  EventHeader
	Status QueueStatus
	// Join, if set, is shown instead of the status: the visitor stands nowhere yet and
	// joins by the form, with a proof of work (proof.templ).
	Join *QueueJoin
}

// QueueStatus is the part of the queue page that refreshes itself. With JavaScript
// (static/js/queue.js) it follows the event's board (BoardURL) every PollAfter seconds
// and rewrites its figures from it, asking its own URL (a look, whose answer replaces
// it or moves the browser on to the seat page) only after LookAfter seconds, at once
// when the board shows its turn, and soon when the board's state leaves State.
// Everything in it is already worded for people; the first paint is the server's.
type QueueStatus struct {
	URL      string // where it looks again
	BoardURL string // the event's board, the same for every waiter
	SeatsURL string // the seat page, once admitted
	Paused   bool   // Redis is away: nobody is let in for now
	// Lapsed, if set, says why the visitor is waiting again: their last turn lapsed
	// with no seat held, and they are back in the queue.
	Lapsed   string
	Admitted bool
	SoldOut  bool
	PreQueue bool // before the onsale: places are drawn at random then
	Presale  bool // the presale's room, for its code holders: drawn when the presale opens
	AllHeld  bool // nothing free: everything left is held by people paying
	// LikelyGone: more people are ahead than the unsold places are likely to serve
	// (waitroom.Status.LikelyGone): no wait is shown, but why.
	LikelyGone bool
	DrawAt     string // when the draw is, on the venue's clocks, e.g. "10:00 CET"
	DrawISO    string // the same, for the live countdown
	DrawIn     string // how far ahead it is, e.g. "in 5 minutes"
	Position   string // e.g. "3,401"
	Ahead      string // e.g. "3,400 people are ahead of you."
	Wait       string // e.g. "about 4 to 6 minutes"
	Odds       string // e.g. "About 1,200 seats left, 3,400 people ahead of you."
	// Done and Total draw the progress bar: how much of the queue ahead of the visitor
	// when they joined has gone in since. Percent says it in words.
	Done, Total int
	Percent     string
	PollAfter   int // seconds until the page refreshes what it shows (from the board)
	LookAfter   int // seconds until the page looks again at the latest
	// Number is the visitor's number in the line and Place its place in the queue
	// (formatted to read back exactly), Served how many had been let in from the head
	// when the look was made (Number less the position): the board's served and head
	// say from them where the visitor stands. Number 0: not known (not waiting, or
	// before the draw); Place "": not waiting (a pre-queue place is the random number
	// the draw orders by, so the board's head shows a turn before the first look).
	Number, Served int64
	Place          string
}

// State names what the status shows, in the template's order: "paused", "admitted",
// "soldOut", "preQueue", "allHeld" or "waiting". The page looks again soon when the
// board says the event's state is no longer this.
func (q QueueStatus) State() string {
	switch {
	case q.Paused:
		return "paused"
	case q.Admitted:
		return "admitted"
	case q.SoldOut:
		return "soldOut"
	case q.PreQueue:
		return "preQueue"
	case q.AllHeld:
		return "allHeld"
	}
	return "waiting"
}

// drawBefore says what the pre-queue waits for: the presale, or the onsale.
func drawBefore(presale bool) string {
	if presale {
		return "Before the presale"
	}
	return "Before the onsale"
}
