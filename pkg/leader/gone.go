package leader

import (
	"fmt"
	"time"
)

// A Lease that is gone (deleted by hand, kubectl delete lease, to force an
// election) says nothing about whether its holder stopped: a holder cut off
// from the API server keeps leading, its fence open, until its renew
// deadline, counted from its last renewal. client-go creates a missing
// Lease and leads at once; so a standby that had seen a holder waits, as
// for a Lease that is no longer renewed, until the lease duration has
// passed since it last saw the record change (on its own clock). And a
// holder does not create its Lease again within a term: deleted counts as
// lost, its renewals fail and its term ends by its renew deadline.

// seenRecord is the Lease record an Elector saw last, and when it first saw
// it so (its own clock).
type seenRecord struct {
	raw    string
	holder string
	dur    time.Duration
	at     time.Time
}

// observe records the record read, with raw as compared by client-go.
func (e *Elector) observe(holder string, durSeconds int, raw []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if string(raw) == e.seen.raw {
		return
	}
	dur := time.Duration(durSeconds) * time.Second
	if dur < e.o.leaseDuration {
		dur = e.o.leaseDuration
	}
	e.seen = seenRecord{raw: string(raw), holder: holder, dur: dur, at: time.Now()}
}

// goneErr returns an error while a Lease found missing may still be held
// by the holder this Elector saw last: another replica's holding may last
// until a lease duration after this one last saw it renewed. Nil once it
// may be created.
func (e *Elector) goneErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen.holder == "" || e.seen.holder == e.o.identity {
		return nil
	}
	until := e.seen.at.Add(e.seen.dur)
	if !time.Now().Before(until) {
		return nil
	}
	return fmt.Errorf("leader: lease %s/%s is gone, but its holder %q may hold it until %s: not created before", e.namespace, e.name, e.seen.holder, until.UTC().Format(time.RFC3339Nano))
}

// createErr refuses to create the Lease while this replica holds it: it was
// deleted under the holder, which counts as lost, not as free.
func (e *Elector) createErr() error {
	if e.holdingUntil().IsZero() {
		return nil
	}
	return fmt.Errorf("leader: lease %s/%s was deleted while held: not created again in this term", e.namespace, e.name)
}
