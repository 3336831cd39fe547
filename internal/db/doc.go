// Package db is the PostgreSQL seam: the queries sqlc generates from queries/*.sql
// (the *.sql.go files, models.go, db.go, batch.go, copyfrom.go: never edited by hand)
// and, beside them, pipeline.go and lazytx.go, which send its statements together and
// begin a transaction with its first round trip.
//
// It imports only pgx. The domain packages (booking, catalog, checkin, staff,
// session, verification, jobs, demo) import it; web, views and the commands never do.
package db
