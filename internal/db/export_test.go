package db

// StatementText is the text of the statements whose plans plans_test.go checks, by the
// names queries/*.sql gives them.
var StatementText = map[string]string{
	"SeatHold": seatHold, "SeatClaimUnlocked": seatClaimUnlocked, "SeatSell": seatSell,
	"SeatBestRows": seatBestRows, "SeatBestRowsInSection": seatBestRowsInSection,
	"SeatTidyLapsed": seatTidyLapsed, "SeatsOfHold": seatsOfHold, "SeatsOfHolds": seatsOfHolds,
	"HoldSeatsHeld": holdSeatsHeld, "HoldsGALapsed": holdsGALapsed, "HoldsOfBuyer": holdsOfBuyer,
	"StaffHoldsOfEvent": staffHoldsOfEvent, "ControlCounts": controlCounts,
	"HoldCreate": holdCreate, "BuyerWithinLimit": buyerWithinLimit,
	"HoldBasket": holdBasket, "HoldBasketSeats": holdBasketSeats,
}
