package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// hostAllowed tells whether host (a request's Host header) names this
// listener rather than another site. A page of another site can point its
// own name at 127.0.0.1 (DNS rebinding) and read a localhost dashboard
// with requests the browser takes for same-origin; they carry that
// site's name in Host. An IP literal cannot be rebound, nor can
// "localhost" and its subdomains (browsers resolve them to loopback
// themselves); any other name must be in allowed.
func hostAllowed(host string, allowed []string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if name == "" {
		return false
	}
	if net.ParseIP(name) != nil || name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSuffix(a, "."))
		if a == name || a == strings.ToLower(host) {
			return true
		}
	}
	return false
}

// refuseHost answers a request for a name this listener does not know.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	http.Error(w, fmt.Sprintf("dashboard: refused a request for host %q: only IP addresses, localhost "+
		"and the names in Options.AllowedHosts are served (a page of another site whose name points here "+
		"must not read the dashboard; add the name you use to AllowedHosts)", r.Host), http.StatusForbidden)
}

// Protect wraps the handler of a whole listener that serves the dashboard
// next to other endpoints (e.g. /scheduler/, /controller/, /metrics), so
// that none of them is read by another site through DNS rebinding: a
// request whose Host is not an IP address, localhost or one of
// allowedHosts is refused with 403. (Requests of other sites that change
// something are refused by the Lariat APIs themselves.)
func Protect(h http.Handler, allowedHosts []string) http.Handler {
	allowed := append([]string(nil), allowedHosts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, allowed) {
			refuseHost(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
