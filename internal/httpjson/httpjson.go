// Package httpjson writes the JSON replies of Lariat's introspection
// endpoints (event history, scheduler) and routes their requests (Mux), so
// they answer and fail alike.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write sends v as JSON with the status code; a value that cannot be
// encoded becomes a 500 with the encoding error.
func Write(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Error sends {"error": err} with the status code.
func Error(w http.ResponseWriter, status int, err error) {
	Write(w, status, map[string]string{"error": err.Error()})
}
