package workqueue

import "testing"

// TestAddUnlessUnread: an item being processed is queued again after Done
// only when unread says its hand-out has done what the add asks for; an
// item that is not processing is queued as by AddWithPriority.
func TestAddUnlessUnread(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	var asked []Ticket
	unreadIf := func(v bool) func(Ticket) bool {
		return func(t Ticket) bool { asked = append(asked, t); return v }
	}

	q.AddUnlessUnread("a", High, unreadIf(true)) // not processing: queued
	item, ticket, _ := q.GetTicket()
	if item != "a" {
		t.Fatalf("got %q, want a", item)
	}
	if len(asked) != 0 {
		t.Fatalf("unread was asked %v for an item not processing", asked)
	}
	q.AddUnlessUnread("a", High, unreadIf(true))
	if len(asked) != 1 || asked[0] != ticket {
		t.Fatalf("unread was asked %v, want the hand-out's ticket %v", asked, ticket)
	}
	q.DoneTicket("a", ticket)
	if n := q.Len(); n != 0 {
		t.Fatalf("%d items ready after an add the unread hand-out covered, want 0", n)
	}

	q.Add("a")
	_, ticket, _ = q.GetTicket()
	q.AddUnlessUnread("a", High, unreadIf(false))
	q.DoneTicket("a", ticket)
	if got := get(t, q); got != "a" {
		t.Fatalf("got %q, want a queued again after a hand-out that had read", got)
	}
}
