// Package web is boxoffice's HTTP surface and the only package that imports Echo: the
// routes table, middleware, one file per resource, and the one error handler.
//
// A handler decodes the request into a small struct, calls one method of a domain
// package (booking, catalog, checkin, staff, verification, the waiting room) with the
// request's context, and answers with a page or fragment (views) or JSON under
// /api/v1; errors are returned, never written, and handleError decides the answer.
//
// It never imports the generated queries (internal/db): the domain packages own the
// SQL. Nor does it import the composition root (internal/app), which builds it with New
// from the parts it uses (Deps).
package web
