package views

// SalesDashboard is the box office's figures on the landing page: today's sales
// across events, each event's, and a chart of tickets sold per day. Shown is false
// for a role that does not see sales (the door).
//
// Fees and tax are not recorded apart from the price yet: the revenue is what buyers
// paid, and the page says so instead of showing made-up zeros.
type SalesDashboard struct {
	Shown        bool
	Today        string // "Sun 6 Dec 2026"
	TodayTickets int
	TodayRevenue string
	Events       []EventSalesRow
	Chart        Chart
}

// EventSalesRow is one event's sales.
type EventSalesRow struct {
	Name, When            string
	Tickets, TicketsToday int
	Left, Capacity        int
	Revenue, RevenueToday string
	Fees, Tax             string // the parts of Revenue charged as fees and as tax
}
