package booking

import "boxoffice/internal/waitroom"

// Room is what the waiting room knows of the event: the one place that maps the
// event's stored queue settings to the room's. A paused room admits at rate 0 and
// keeps its queue.
func (ev Event) Room() waitroom.Event {
	rate := ev.QueueRate
	if ev.QueuePaused {
		rate = 0
	}
	return waitroom.Event{ID: ev.ID, OnsaleAt: ev.OnsaleAt, Settings: waitroom.Settings{
		Enabled: ev.QueueEnabled, Slots: ev.QueueSlots, Rate: rate, TokenTTL: ev.QueueTokenTTL, Idle: ev.QueueIdle,
	}}
}
