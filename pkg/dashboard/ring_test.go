package dashboard

import (
	"fmt"
	"testing"
)

// TestRingKeepsTheNewestAndCountsTheRest fills a buffer past its size: the
// oldest messages go, counted, and the newest stay in order.
func TestRingKeepsTheNewestAndCountsTheRest(t *testing.T) {
	r := newRing(4)
	drops := 0
	for i := range 10 {
		if r.push(message{event: "n", v: fmt.Sprint(i)}) {
			drops++
		}
	}
	msgs, dropped := r.take()
	if dropped != 6 || drops != 6 {
		t.Errorf("dropped %d (push reported %d), want 6", dropped, drops)
	}
	var got string
	for _, m := range msgs {
		got += m.v.(string)
	}
	if got != "6789" {
		t.Errorf("kept %q, want the newest, 6789", got)
	}
	if msgs, dropped := r.take(); len(msgs) != 0 || dropped != 0 {
		t.Errorf("after take: %d messages, %d dropped; want an empty buffer", len(msgs), dropped)
	}
	// Filled again from where the last take left it, past the wrap.
	for i := range 6 {
		r.push(message{event: "n", v: fmt.Sprint(i)})
	}
	msgs, dropped = r.take()
	got = ""
	for _, m := range msgs {
		got += m.v.(string)
	}
	if got != "2345" || dropped != 2 {
		t.Errorf("second round: kept %q, dropped %d; want 2345 and 2", got, dropped)
	}
}
