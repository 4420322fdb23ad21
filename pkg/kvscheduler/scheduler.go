package kvscheduler

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/utils/clock"
)

// Scheduler is a KV scheduler. Transactions, notifications, retries and
// registrations are queued and processed one at a time by one goroutine;
// the read methods are safe for concurrent use.
type Scheduler struct {
	opts    Options
	metrics *metrics

	qmu    sync.Mutex
	queue  []*job
	signal chan struct{}
	closed bool
	quit   chan struct{}
	exited chan struct{} // closed once Close's wait for the goroutines ends
	wg     sync.WaitGroup
	// retries are the retries armed and not due yet, by generation, under
	// qmu: the worker arms and disarms them, Close stops their timers.
	retries map[uint64]*job
	// retryDue are the retries whose timer fired, not run yet; they wait
	// there while retryHolds is above zero (see HoldRetries).
	rmu        sync.Mutex
	retryDue   []*job
	retryHolds int

	// Owned by the worker goroutine.
	reg         *registry
	g           *graph
	seq         uint64
	retryGen    uint64
	resyncCount int
	// unread holds, during a transaction, the descriptors whose Retrieve
	// failed (in a resync's read, or a read-back): their values get no
	// operations until a read can see them.
	unread map[string]*RetrieveError
	// unknownNodes are the values held unknown (node.heldUnknown): their
	// read-back after a failed operation failed, so what the operation
	// did is not known (a create or delete may have done its work and
	// then failed), and the next transaction of any kind reads them
	// before it decides anything on them (see readUnknown). A failed read
	// is never taken for absence.
	unknownNodes []*node
	// clashed are the bases left INVALID because a key they derive is
	// another value's, with that key: applied again once it is free (see
	// applyReleased).
	clashed map[*node]string
	// regain are the wanted bases whose derived key a read found the
	// southbound's own (disown), with that key: applied again once it is
	// free, so that they derive it again (see applyRegained).
	regain map[*node]string
	// dirty are the nodes whose status may have changed since they were
	// last published (each once: node.dirty).
	dirtyNodes []*node
	// waiters are, per key, the values whose delete waits for it to go.
	waiters map[string][]*node
	// scratch holds the buffers statuses are built in (see publish).
	scratch statusScratch
	// readGen numbers the reads of descriptors (see readMarks);
	// readSince is the first number of the refresh under way, so that a
	// value reported by any read of it is told from one not reported.
	readGen   uint64
	readSince uint64
	// readStack, readDepths and readKeys are buffers of refreshValue.
	readStack  []*node
	readDepths []int
	readKeys   []string
	// resume holds what a transaction stopped by its context left undone.
	resume map[*node]resumeKind

	// Readable by anyone.
	smu sync.RWMutex
	// statuses holds, per key, its published status and view (see
	// pubEntry).
	statuses map[string]*pubEntry
	mdMaps   map[string]*metadataMap
	watches  map[*Watch]struct{}
	// watchesClosed is set by Close once it has taken the watches.
	watchesClosed bool

	hist      history
	trimTimer clock.Timer

	ctx    context.Context // cancelled when Close begins
	cancel context.CancelFunc
	cur    *job // the job the worker runs; under qmu
	// callMu guards callNow, the descriptor call in progress (op empty
	// when none).
	callMu  sync.Mutex
	callNow descCall
	// walkBound, set by tests only, bounds a walk to this many frames
	// (0: 64 per value of the graph, plus 64; see walker.drain).
	walkBound atomic.Int64
	// beforeDequeue, set by tests only, runs on the worker right before it
	// takes the next queued job (after its check for due retries).
	beforeDequeue atomic.Pointer[func()]
	// afterJob, set by tests only, runs on the worker after each job and
	// each retry, before its result is delivered: the property checks
	// compare the model's invariants there, between transactions.
	afterJob atomic.Pointer[func()]
	// beforeWatch, set by tests only, runs in WatchValueStatus once it
	// found the scheduler not closed, before it registers the watch.
	beforeWatch atomic.Pointer[func()]
	// leaveCheck, set by tests only, makes each NB transaction build the
	// model of its leaving set and report how it compares with what the
	// step did (see checkLeaveSet).
	leaveCheck atomic.Pointer[func(leaveReport)]
}

type jobKind int

const (
	jobTxn jobKind = iota
	jobRegister
	jobNotify
	jobRetry
)

type job struct {
	kind jobKind
	ctx  context.Context // of a blocking Commit: operations stop when it ends
	txn  *Txn
	desc *Descriptor
	kv   KVWithMetadata
	keys []string
	gen  uint64
	// timer is the timer of a retry; live counts the values it would
	// still retry (those not changed, deleted or applied since).
	timer clock.Timer
	live  int
	done  chan jobResult
	once  sync.Once // done receives one result: the worker's, or Close's
}

// finish hands the job its result, unless it already has one.
func (j *job) finish(r jobResult) {
	if j.done == nil {
		return
	}
	j.once.Do(func() { j.done <- r })
}

type jobResult struct {
	rec *TxnRecord
	err error
}

// New starts a scheduler. It fails if opts are invalid (an error wrapping
// ErrInvalidOptions) or if the metrics cannot be registered.
func New(opts Options) (*Scheduler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.defaults()
	m, err := newMetrics(opts.Registerer, opts.Name)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		opts: opts, metrics: m, signal: make(chan struct{}, 1), quit: make(chan struct{}), exited: make(chan struct{}),
		reg: newRegistry(), g: newGraph(),
		statuses: map[string]*pubEntry{},
		waiters:  map[string][]*node{}, retries: map[uint64]*job{},
		mdMaps: map[string]*metadataMap{}, watches: map[*Watch]struct{}{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.hist.maxCount, s.hist.maxAge = opts.HistoryMaxCount, opts.HistoryMaxAge
	s.scheduleTrim()
	s.wg.Add(1)
	go s.run()
	return s, nil
}

func (s *Scheduler) enqueue(j *job) error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.queue = append(s.queue, j)
	select {
	case s.signal <- struct{}{}:
	default:
	}
	return nil
}

func (s *Scheduler) run() {
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case <-s.signal:
		}
		for {
			// Retries whose time has come go before queued jobs.
			if s.runDueRetries() {
				continue
			}
			if f := s.beforeDequeue.Load(); f != nil {
				(*f)()
			}
			s.qmu.Lock()
			if len(s.queue) == 0 || s.closed {
				s.qmu.Unlock()
				break
			}
			j := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.cur = j
			s.qmu.Unlock()
			// A retry whose timer fired after the check above but before
			// the job was queued goes first too: a transaction committed
			// after the clock passed a retry's time sees it done, however
			// the goroutines were scheduled.
			s.runDueRetries()
			rec, err := s.process(j)
			s.afterJobHook()
			// The result is delivered before the job stops being current,
			// so that a Commit whose ctx ended finds it (see started).
			j.finish(jobResult{rec: rec, err: err})
			s.qmu.Lock()
			s.cur = nil
			s.qmu.Unlock()
		}
	}
}

// started tells whether j has begun: it is running, or its result is
// waiting in j.done. A job that has not begun is still queued, or was
// dropped by Close (which then delivered ErrClosed).
func (s *Scheduler) started(j *job) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.cur == j || len(j.done) > 0
}

// afterJobHook runs the afterJob hook, if a test set one.
func (s *Scheduler) afterJobHook() {
	if f := s.afterJob.Load(); f != nil {
		(*f)()
	}
}

// runDueRetries runs the retries whose timers fired, oldest armed first,
// unless the scheduler is closed; it tells whether there were any.
func (s *Scheduler) runDueRetries() bool {
	due := s.dueRetries()
	if len(due) == 0 {
		return false
	}
	s.qmu.Lock()
	closed := s.closed
	s.qmu.Unlock()
	if closed {
		return false
	}
	for _, j := range due {
		_, _ = s.retryFailed(j)
		s.afterJobHook()
	}
	return true
}

// RegisterDescriptor adds a descriptor. Values that waited for it
// (UNIMPLEMENTED) are applied right away. Invalid descriptors, duplicate
// names, overlapping NB key prefixes, retrieve-dependency cycles and a
// KeySelector claiming keys that already have values (of another
// descriptor, or in the southbound without a descriptor: properties and
// notified values; the error names them) are reported as errors wrapping
// ErrInvalidDescriptor.
func (s *Scheduler) RegisterDescriptor(ctx context.Context, d *Descriptor) error {
	j := &job{kind: jobRegister, desc: d, done: make(chan jobResult, 1)}
	if err := s.enqueue(j); err != nil {
		return err
	}
	select {
	case r := <-j.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PushSBNotification tells the scheduler that the southbound created,
// changed (value != nil) or removed (value == nil) a value on its own. The
// value is owned by the southbound and satisfies dependencies. The
// notification is processed asynchronously, in order with transactions.
// It is ignored for a key the northbound manages (requested, or applied
// from a request). Unlike the reference, which ignores notifications for
// keys no descriptor claims, such a key is accepted: it then only
// satisfies the dependencies of other values.
func (s *Scheduler) PushSBNotification(key string, value any, metadata any) error {
	if key == "" {
		return ErrEmptyKey
	}
	return s.enqueue(&job{kind: jobNotify, kv: KVWithMetadata{Key: key, Value: value, Metadata: metadata, Origin: FromSB}})
}

// GetValueStatus returns the status of key; unknown keys are NONEXISTENT.
func (s *Scheduler) GetValueStatus(key string) ValueStatus {
	s.smu.RLock()
	defer s.smu.RUnlock()
	if e, ok := s.statuses[key]; ok {
		return *e.st
	}
	return ValueStatus{Key: key, State: NonExistent}
}

// ValueStatuses returns the statuses of all keys matching selector (all
// keys if nil), sorted by key. The selector is called with the status lock
// read-held; a selector that panics panics in the caller, with the lock
// released.
func (s *Scheduler) ValueStatuses(selector func(key string) bool) []ValueStatus {
	out := s.selectStatuses(selector)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// selectStatuses copies the statuses selector selects. The unlock is
// deferred: a selector that panics must not leave the lock held, or the
// scheduler's next publish, and every reader after it, would wait for ever.
func (s *Scheduler) selectStatuses(selector func(key string) bool) []ValueStatus {
	s.smu.RLock()
	defer s.smu.RUnlock()
	out := make([]ValueStatus, 0, len(s.statuses))
	for k, e := range s.statuses {
		if selector == nil || selector(k) {
			out = append(out, *e.st)
		}
	}
	return out
}

// MetadataMap returns the read-only metadata map of a descriptor registered
// with WithMetadata, or false.
func (s *Scheduler) MetadataMap(descriptor string) (MetadataMap, bool) {
	s.smu.RLock()
	defer s.smu.RUnlock()
	m, ok := s.mdMaps[descriptor]
	return m, ok
}
