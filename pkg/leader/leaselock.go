package leader

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// errLeaseKept refuses a release while the term's work may still run.
var errLeaseKept = errors.New("leader: not released while the term's work may still run; the lease will expire")

// errLeaseNotOurs refuses a release of a Lease that the read before it
// found held by another identity, or by none.
var errLeaseNotOurs = errors.New("leader: not released: the Lease as read names another holder")

// trackingLock is client-go's LeaseLock that tells its Elector when a
// renewal naming it succeeded, timed from before the request was sent.
type trackingLock struct {
	*resourcelock.LeaseLock
	e *Elector
	// mayRelease is false while a release must not be sent (see term).
	mayRelease *atomic.Bool
	// termID is the term's ID, written into the Lease's labels.
	termID string
	// readHolder is the holder the last successful Get read. client-go
	// calls Get and Update from one goroutine, a Get right before each
	// release attempt.
	readHolder string
}

// Get reads the Lease. client-go tells whether the lease changed since it
// last looked by comparing the raw record returned here, and counts the
// lease duration from when it last saw it change; its own raw record keeps
// the renew time in whole seconds (metav1.Time's JSON), so renewals within
// one second would look unchanged and a standby would count from an earlier
// renewal, taking over up to a second early. The API server keeps a Lease's
// renewTime to the microsecond (metav1.MicroTime), and so does the record in
// memory: appended to the raw record, it makes every renewal a change.
func (l *trackingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.LeaseLock.Get(ctx)
	if apierrors.IsNotFound(err) {
		if gone := l.e.goneErr(); gone != nil {
			return nil, nil, gone // not NotFound: client-go does not create it
		}
	}
	if err != nil || r == nil {
		return r, raw, err
	}
	l.readHolder = r.HolderIdentity
	raw = append(raw, r.RenewTime.UTC().Format(time.RFC3339Nano)...)
	l.e.observe(r.HolderIdentity, r.LeaseDurationSeconds, raw)
	return r, raw, nil
}

// Create creates the Lease (the first candidate ever, or the first once a
// Lease deleted may no longer be held: see gone.go).
func (l *trackingLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if err := l.e.createErr(); err != nil {
		return err
	}
	return l.write(ctx, r, l.LeaseLock.Create)
}

// Update acquires, renews or (with no holder) releases the Lease.
func (l *trackingLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, r, l.LeaseLock.Update)
}

func (l *trackingLock) write(ctx context.Context, r resourcelock.LeaderElectionRecord, do func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	if r.HolderIdentity != l.Identity() {
		// A release: our writes stop before the lease is given up.
		l.e.revoke()
		if !l.mayRelease.Load() {
			return errLeaseKept
		}
		if l.readHolder != l.Identity() {
			// client-go judges that it holds the Lease by the record it
			// last renewed: a release retried after a conflict would
			// clear the Lease another holder took once ours expired.
			return errLeaseNotOurs
		}
		for k, v := range l.e.o.releaseLabels {
			l.LeaseLock.Labels[k] = v // the lock's own copy (termLabels)
		}
		return do(ctx, r)
	}
	sent := time.Now()
	err := do(ctx, r)
	if err == nil {
		l.e.renewed(heldFrom(r, sent), l.termID)
	}
	return err
}

// heldFrom returns the moment a renewal's holding counts from: the
// renewTime the record carries, when it is earlier than the moment the
// write was sent. client-go takes the renewTime before its first request
// of an attempt; when the optimistic update fails it reads the Lease and
// updates it then, with that renewTime, so the write that succeeds may be
// sent long after it. Standbys and the sharder count the lease duration
// from the recorded renewTime, so the fence must count its renew deadline
// from there too, or it would stay open into the margin that keeps the
// old holder's writes from overlapping the next one's.
func heldFrom(r resourcelock.LeaderElectionRecord, sent time.Time) time.Time {
	if renew := r.RenewTime.Time; !renew.IsZero() && renew.Before(sent) {
		return renew
	}
	return sent
}
