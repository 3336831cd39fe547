package live

import "strconv"

// Keys and channels of one event share the hash tag {event:ID}, so they stay on one
// Redis Cluster slot.
func eventTag(eventID int64) string { return "{event:" + strconv.FormatInt(eventID, 10) + "}" }

func versionKey(prefix string, eventID int64) string   { return prefix + eventTag(eventID) + ":version" }
func seatsChannel(prefix string, eventID int64) string { return prefix + eventTag(eventID) + ":seats" }
