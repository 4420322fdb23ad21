package cache

import (
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// DefaultInitialEventsTimeout is Options.InitialEventsTimeout's default.
const DefaultInitialEventsTimeout = 15 * time.Second

const noWatchListMessage = "the API server does not end streams of initial events with the initial-events-end bookmark (no watch-list): listing instead"

// noWatchListStatus is the error a stream of initial events that went
// quiet without its end bookmark ends with. client-go's reflector does not
// retry a watch-list that fails with a bad request: it lists.
func noWatchListStatus() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest,
		Message: noWatchListMessage}
}

// errNoWatchList refuses a stream of initial events for a kind known to
// lack them, so that the reflector lists at once.
func errNoWatchList() error { return apierrors.FromObject(noWatchListStatus()) }

// lackWatchList records that this kind's server lacks watch-list, logging
// it the first time.
func (h *kindHealth) lackWatchList() {
	if h != nil && !h.lacksWatchList.Swap(true) {
		h.log.Warn(noWatchListMessage)
	}
}

// listOnly tells client-go's reflector not to ask for streams of initial
// events (Options.NoWatchList).
type listOnly struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported is what the reflector asks.
func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }
