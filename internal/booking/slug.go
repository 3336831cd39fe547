package booking

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// EventBySlug returns the event a page URL names.
func (s *Buyer) EventBySlug(ctx context.Context, slug string) (Event, error) {
	if slug == "" || len(slug) > 200 {
		return Event{}, ErrEventNotFound
	}
	r, err := s.q.EventGetBySlug(ctx, slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, ErrEventNotFound
	} else if err != nil {
		return Event{}, translate(err)
	}
	return eventOf(r), nil
}
