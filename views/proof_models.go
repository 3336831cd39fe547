package views

// Proof is a page's ask for a proof of work: static/js/proof.js puts ALTCHA's widget
// (Module, its Worker and CSS, all under /static) in the box, which fetches a challenge
// from Challenge and solves it in the background. For is what it is asked for, "join"
// (the queue) or "hold" (the session's first hold), and picks the words.
type Proof struct {
	Module, Worker, CSS string
	Challenge           string
	For                 string
}

// QueueJoin is the queue page's form for joining, sent by the page's script once its
// proof is solved.
type QueueJoin struct {
	Action string
	CSRF   string
	Proof  Proof
}
