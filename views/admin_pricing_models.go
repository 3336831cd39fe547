package views

// PricingPage is an event's ticket types, their prices per level, its fees and tax.
type PricingPage struct {
	AdminPage
	EventName, Notice, Error string
	// Base is the event's admin path ("/admin/events/7"); CodesURL its codes' page.
	Base, CodesURL    string
	TaxRate, TaxLabel string
	Fees              []FeeRow
	Levels            []LevelColumn
	Types             []TypeRow
	New               TypeRow
}

// FeeRow is the fees of one payment method ("all": every method).
type FeeRow struct {
	Method, Label, PerTicket, PerOrder string
}

// LevelColumn is a price level: its form key, its name and its own price.
type LevelColumn struct {
	Key, Name, Base string
}

// TypeRow is one ticket type's form; ID "" is the new type's.
type TypeRow struct {
	ID, Name, Position, MaxPerOrder                       string
	CountsAsAdult, NeedsAdult, DeskOnly, CodeOnly, Paused bool
	Prices                                                []PriceCell
}

// PriceCell is a type's price at one level, "" where it is not offered.
type PriceCell struct {
	Key, Level, Value string
}

// CodesPage lists an event's vouchers and access codes, and makes new ones.
type CodesPage struct {
	AdminPage
	EventName, Notice, Error, Base, Zone string
	Types                                []Option
	Vouchers                             []VoucherItem
	Codes                                []AccessCodeItem
}

// VoucherItem is a voucher in the list.
type VoucherItem struct {
	ID, Code, Off, Types, Uses, Valid string
	Paused                            bool
}

// AccessCodeItem is an access code in the list.
type AccessCodeItem struct {
	ID, Code, Window, Places, Reveals string
	Paused                            bool
}
