package dashboard

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// writeJSON answers v as JSON; the dashboard's answers are never cached,
// since they describe the operator now.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// intParam reads a positive integer parameter, def when absent or invalid.
func intParam(r *http.Request, name string, def, max int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, max)
}
