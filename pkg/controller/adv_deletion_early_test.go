package controller_test

import "testing"

// TestDeletionDuringAStreamedReadBeforeTheSyncIsToldOnce: a pass of a run
// begun on a streamed initial list that begins its read before the
// informer synced reads through GetStreamed, outside the known keys' lock;
// a deletion delivered during that read queues the key again (the pass
// had recorded itself as reading), and the read misses. The pass must not
// tell the handlers then: the pass queued again does, once.
func TestDeletionDuringAStreamedReadBeforeTheSyncIsToldOnce(t *testing.T) {
	h := newHeldReadSetup(t, "stream-delete-early")
	if err := h.c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h.startAndHoldTheRead(t)
	close(h.informer.proceed)
	// The first marker is handled after the pass that read doomed (queued
	// during it), the second after a pass of doomed queued again.
	h.toldOnce(t, "after-the-pass", "after-the-deletion")
}
