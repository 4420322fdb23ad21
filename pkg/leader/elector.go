package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// ErrLeaseLost is the cause (context.Cause) of a work context that ended
// because the lease was lost or could not be renewed in time.
var ErrLeaseLost = errors.New("leader: lease lost")

// Elector competes for one Lease and runs work while it holds it. Build it
// with New; Run it once at a time.
type Elector struct {
	leases          coordinationv1client.LeasesGetter
	namespace, name string
	o               options

	mu         sync.Mutex
	running    bool
	validUntil time.Time  // zero unless a renewal of ours succeeded and no release followed
	leader     string     // the holder last seen
	seen       seenRecord // the Lease record last seen (see gone.go)
	termID     string     // the term validUntil counts from (termstamp.go)

	passes *passTable // the objects handlers of the term are handling
}

// New returns an Elector for the Lease namespace/name, which it creates if
// missing. leases is usually clientset.CoordinationV1(); give it a client
// of its own, not one behind Fence. New makes no request.
func New(leases coordinationv1client.LeasesGetter, namespace, name string, opts ...Option) (*Elector, error) {
	if leases == nil || namespace == "" || name == "" {
		return nil, errors.New("leader: a lease client, namespace and name are required")
	}
	o, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return &Elector{leases: leases, namespace: namespace, name: name, o: o, passes: &passTable{}}, nil
}

// Run calls fn each time this replica becomes leader, with a context that
// ends when the lease is lost, when its renew deadline passes, or when ctx
// ends. fn must return only once its context has ended and its work has
// stopped, every handler included: return f.Run(ctx, workers) of a
// generic or controller factory. If it returns nil earlier, the lease is
// held until that context ends anyway (wrangler's start-and-return
// callbacks), but work it started is not waited for. Run releases the
// lease only after fn returned; if fn's error matches
// controller.ErrStillRunning (handlers outlived the factory's stop grace
// period), the lease is not released at all but left to expire, so that
// no other replica leads while they may still act.
//
// Run returns nil when ctx ends, or fn's error when fn fails while its
// context is still live, or when it reports work still running as ctx
// ends (an error returned after the lease was lost is logged, and the
// replica stands by again). It never exits the process.
func Run(ctx context.Context, leases coordinationv1client.LeasesGetter, namespace, name string, fn func(context.Context) error, opts ...Option) error {
	e, err := New(leases, namespace, name, opts...)
	if err != nil {
		return err
	}
	return e.Run(ctx, fn)
}

// Identity returns the holder identity this Elector writes into the Lease.
func (e *Elector) Identity() string { return e.o.identity }

// LeaseDuration returns the lease duration this Elector writes into the
// Lease (WithLeaseDuration), so that a caller that bounds it (pkg/shard's
// members) can check it.
func (e *Elector) LeaseDuration() time.Duration { return e.o.leaseDuration }

// Leader returns the holder of the Lease as last seen ("" before the first
// look, or after a release).
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

// Holding reports whether this replica holds the lease now: a renewal of
// its own succeeded, recording a renewTime less than the renew deadline
// ago, and has not been released. Fence lets writes through only while it is true.
func (e *Elector) Holding() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.validUntil.IsZero() && time.Now().Before(e.validUntil)
}

// holdingUntil returns when the current holding ends (the renew deadline
// of the last successful renewal), or zero if the replica does not hold
// the lease now.
func (e *Elector) holdingUntil() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.validUntil.IsZero() || !time.Now().Before(e.validUntil) {
		return time.Time{}
	}
	return e.validUntil
}

// Run is the package's Run on an Elector built already (for Fence, or to
// ask Leader and Holding while it runs). It fails if the Elector runs
// already.
func (e *Elector) Run(ctx context.Context, fn func(context.Context) error) error {
	if e.o.group != "" {
		// The policy tells a group's Leases apart by their term: a Lease
		// in a second term would leave its first term's creates judged
		// by no parameter, and admitted.
		return fmt.Errorf("leader: the Lease %s/%s is one of the term group %s, held for one term: use RunTerm", e.namespace, e.name, e.o.group)
	}
	if err := e.start(); err != nil {
		return err
	}
	defer e.stop()
	defer e.warnIfUnfenced(ctx)()
	for ctx.Err() == nil {
		if err := e.term(ctx, fn); err != nil {
			return err
		}
	}
	return nil
}

// RunTerm is one term of Run: it waits for the lease, calls fn while it is
// held, releases it once fn returned, and returns without campaigning
// again. When it returns nil while ctx is still live, the lease was lost
// (fn's context ended with ErrLeaseLost) or, rarely, lost before fn could
// be called. It is for holders whose identity must not outlive a lost term,
// such as pkg/shard's members: a new term there takes a new identity.
func (e *Elector) RunTerm(ctx context.Context, fn func(context.Context) error) error {
	if err := e.start(); err != nil {
		return err
	}
	defer e.stop()
	if ctx.Err() != nil {
		return nil
	}
	return e.term(ctx, fn)
}

func (e *Elector) start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running {
		return errors.New("leader: Run or RunTerm called while the Elector runs")
	}
	e.running = true
	return nil
}

func (e *Elector) stop() {
	e.mu.Lock()
	e.running = false
	e.mu.Unlock()
}

// term is one candidacy: wait for the lease, lead until the lease is lost
// or ctx ends, release. It returns once fn (if it ran) has returned.
func (e *Elector) term(ctx context.Context, fn func(context.Context) error) error {
	// The election runs on a context of its own, so that ctx ending does
	// not release the lease while fn still stops; it ends after fn.
	electCtx, stopElect := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElect()
	var (
		mu      sync.Mutex
		leading bool // fn was called
		over    bool // the elector returned: fn must not start any more
		fnErr   error
		done    = make(chan struct{})
		// mayRelease is false from fn's call until it returned with its
		// work stopped: a release client-go attempts meanwhile (after a
		// failed renewal) is refused, and so is one after fn reported
		// work still running, so that the lease expires instead.
		mayRelease atomic.Bool
	)
	mayRelease.Store(true)
	// While waiting for the lease, ctx ending ends the election at once.
	unwatch := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !leading {
			stopElect()
		}
	})
	defer unwatch()

	lock := e.termLock(&mayRelease)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            e.namespace + "/" + e.name,
		LeaseDuration:   e.o.leaseDuration,
		RenewDeadline:   e.o.renewDeadline,
		RetryPeriod:     e.o.retryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				if over || ctx.Err() != nil {
					mu.Unlock()
					stopElect()
					return
				}
				leading = true
				mayRelease.Store(false)
				mu.Unlock()
				defer close(done)
				defer stopElect() // releases the lease, now that fn has returned
				var keep bool
				keep, fnErr = e.lead(ctx, leadCtx, fn)
				mayRelease.Store(!keep)
			},
			OnStoppedLeading: func() {},
			OnNewLeader:      e.setLeader,
		},
	})
	if err != nil {
		return fmt.Errorf("leader: %w", err)
	}
	le.Run(electCtx)
	mu.Lock()
	over = true
	wait := leading
	mu.Unlock()
	if wait {
		<-done
	}
	e.revoke()
	return fnErr
}

// termLock is the Lease lock of one candidacy. Each candidacy is a term of
// its own, with an ID written into the Lease, so that creates stamped in
// an earlier term of this same holder are refused too (termstamp.go).
func (e *Elector) termLock(mayRelease *atomic.Bool) *trackingLock {
	termID := newTermID()
	labels := e.termLabels(termID)
	for k := range e.o.releaseLabels {
		// client-go adds the lock's labels to the Lease it read and
		// removes none: a release label an earlier term wrote would stay
		// on the Lease this term holds. Acquisitions and renewals empty
		// it; the release alone sets it (trackingLock.write).
		labels[k] = ""
	}
	return &trackingLock{LeaseLock: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.namespace, Name: e.name},
		Client:     e.leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.o.identity},
		Labels:     labels,
	}, e: e, mayRelease: mayRelease, termID: termID}
}

// lead runs fn for one term of leadership. keep is true when the lease
// must not be released: fn's error says that work of the term still runs
// (controller.ErrStillRunning). err is fn's error if it failed while the
// term was live, or if its work outlived the stop grace while ctx ended
// (the process is stopping: the caller learns that the lease was left to
// expire).
func (e *Elector) lead(ctx, leadCtx context.Context, fn func(context.Context) error) (keep bool, err error) {
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stopParent := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stopParent()
	stopLead := context.AfterFunc(leadCtx, func() { cancel(ErrLeaseLost) })
	defer stopLead()
	go e.watchDeadline(work, cancel)
	// Passes begun from here on are this term's; those still running once
	// fn returned outlived it, and their writes stay refused (passes.go).
	e.passes.beginTerm()
	defer e.passes.endTerm()

	log := e.o.log.WithField("lease", e.namespace+"/"+e.name).WithField("identity", e.o.identity)
	log.Info("leader: leading")
	err = fn(work)
	if errors.Is(err, controller.ErrStillRunning) {
		// Releasing would let another replica take the work over while
		// this one's handlers may still act: the lease expires instead,
		// a lease duration after the last renewal, and the fence (closed
		// from now on) refuses their writes.
		log.WithError(err).Warn("leader: work still running after the term: the lease is not released, it will expire")
		if work.Err() == nil || ctx.Err() != nil {
			return true, err
		}
		return true, nil
	}
	if err != nil && work.Err() == nil {
		return false, err
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.WithError(err).Warn("leader: the work failed after its term had ended")
	}
	<-work.Done()
	log.WithField("cause", context.Cause(work)).Info("leader: stopped leading")
	return false, nil
}

// watchDeadline ends work with ErrLeaseLost once the renew deadline of the
// last successful renewal has passed.
func (e *Elector) watchDeadline(work context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		e.mu.Lock()
		until := e.validUntil
		e.mu.Unlock()
		d := time.Until(until)
		if until.IsZero() || d <= 0 {
			cancel(ErrLeaseLost)
			return
		}
		t.Reset(d)
		select {
		case <-work.Done():
			return
		case <-t.C:
		}
	}
}

func (e *Elector) setLeader(id string) {
	e.mu.Lock()
	e.leader = id
	e.mu.Unlock()
	e.o.log.WithField("lease", e.namespace+"/"+e.name).WithField("leader", id).Debug("leader: new leader seen")
}

// renewed records that a write of the lease naming us in the term termID,
// recording a renewal at from (see heldFrom), succeeded: we hold it until
// from + renew deadline.
func (e *Elector) renewed(from time.Time, termID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.termID = termID
	// The holder as last seen is this replica from here on: client-go
	// reports new leaders from a goroutine of its own, which may run after
	// the work function has started and asked Leader.
	e.leader = e.o.identity
	if until := from.Add(e.o.renewDeadline); until.After(e.validUntil) {
		e.validUntil = until
	}
}

// revoke forgets the holding: called before a release is sent and when a
// term ends.
func (e *Elector) revoke() {
	e.mu.Lock()
	e.validUntil = time.Time{}
	e.termID = ""
	e.mu.Unlock()
}

// Logger returns where the Elector logs (WithLogger), for holders built on
// it to log alongside.
func (e *Elector) Logger() logrus.FieldLogger { return e.o.log }
