package httpjson

import (
	"fmt"
	"net/http"
	"strings"
)

// Mux serves the method patterns registered on mux (e.g. "GET
// /scheduler/status"), so that the mux routes by method and path. What the
// mux itself rejects, an unknown path (404) or a method the path does not
// serve (405, with the Allow header the mux sets), is answered as a JSON
// error like the handlers' own errors instead of the mux's plain text. A
// trailing slash is ignored, so that /scheduler/status/ is
// /scheduler/status.
//
// The patterns match whole paths: an API mounted below a prefix is wrapped
// in http.StripPrefix.
//
// A request that changes something (any method but GET, HEAD and OPTIONS)
// sent by a page of another site is refused with 403: these APIs are
// often served on the listener of a browser dashboard, and a cross-site
// form post needs no CORS preflight (http.CrossOriginProtection: the
// browser's Sec-Fetch-Site, or else Origin against Host). Requests from
// tools (curl, no Origin) are served.
func Mux(mux *http.ServeMux) http.Handler {
	return muxHandler{mux: mux, cop: http.NewCrossOriginProtection()}
}

type muxHandler struct {
	mux *http.ServeMux
	cop *http.CrossOriginProtection
}

// ServeHTTP routes r through the mux, translating the mux's own errors.
func (m muxHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := m.cop.Check(r); err != nil {
		Error(w, http.StatusForbidden, fmt.Errorf("refused %s %s from another site: %w", r.Method, r.URL.Path, err))
		return
	}
	if p := strings.TrimSuffix(r.URL.Path, "/"); p != r.URL.Path && p != "" {
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path, u.RawPath = p, strings.TrimSuffix(u.RawPath, "/")
		r2.URL = &u
		r = r2
	}
	// An empty pattern means that no registered handler serves the
	// request: the mux answers with its own error handler.
	if _, pattern := m.mux.Handler(r); pattern != "" {
		m.mux.ServeHTTP(w, r)
		return
	}
	ew := &errorWriter{ResponseWriter: w}
	m.mux.ServeHTTP(ew, r)
	if ew.code == 0 { // not expected from the mux's error handlers
		ew.code = http.StatusNotFound
	}
	var err error
	switch ew.code {
	case http.StatusMethodNotAllowed:
		err = fmt.Errorf("method %s not allowed on %s", r.Method, r.URL.Path)
	case http.StatusNotFound:
		err = fmt.Errorf("no such resource: %s (an API mounted below a prefix is wrapped in http.StripPrefix)", r.URL.Path)
	default:
		err = fmt.Errorf("%s: %s", http.StatusText(ew.code), r.URL.Path)
	}
	Error(w, ew.code, err)
}

// errorWriter takes the status of an error the mux answers and drops its
// plain-text body, which Mux replaces by JSON.
type errorWriter struct {
	http.ResponseWriter
	code int
}

// WriteHeader keeps the first status instead of sending it.
func (w *errorWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

// Write drops the plain-text body.
func (w *errorWriter) Write(b []byte) (int, error) { return len(b), nil }
