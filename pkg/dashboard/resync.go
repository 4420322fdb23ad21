package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// resyncPath is where the page requests a resync (POST), with
// Options.AllowResync.
const resyncPath = Path + "api/resync"

// Resyncer requests a resync of an event loop, as POST /controller/resync
// does; *eventloop.Loop implements it.
type Resyncer interface {
	// RequestResync asks the loop for a resync.
	RequestResync(ctx context.Context) error
}

// enableResync sets up the dashboard's one write action when opts allow
// it: the loop must be able to request a resync.
func (d *Dashboard) enableResync(mux *http.ServeMux) error {
	if !d.opts.AllowResync {
		return nil
	}
	r, ok := d.opts.Loop.(Resyncer)
	if !ok {
		return errors.New("dashboard: Options.AllowResync needs a Loop that can request a resync (RequestResync, as *eventloop.Loop)")
	}
	d.resync = r
	d.cop = http.NewCrossOriginProtection()
	mux.HandleFunc("POST "+resyncPath, d.serveResync)
	return nil
}

// writable tells whether r is the one write the dashboard accepts: a
// resync request, when allowed.
func (d *Dashboard) writable(r *http.Request) bool {
	return d.resync != nil && r.Method == http.MethodPost && r.URL.Path == resyncPath
}

// serveResync answers POST /ui/api/resync: 202 once the resync is
// requested, 503 when it cannot be, and 403 for a request a page of
// another site sent (a cross-site form post needs no CORS preflight).
func (d *Dashboard) serveResync(w http.ResponseWriter, r *http.Request) {
	if err := d.cop.Check(r); err != nil {
		http.Error(w, fmt.Sprintf("dashboard: refused a resync request from another site: %v", err), http.StatusForbidden)
		return
	}
	if err := d.resync.RequestResync(r.Context()); err != nil {
		http.Error(w, fmt.Sprintf("dashboard: the resync could not be requested: %v", err), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintln(w, `{"status":"resync requested"}`)
}
