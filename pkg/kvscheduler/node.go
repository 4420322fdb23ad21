package kvscheduler

// node is one key of the scheduler's graph: what is wanted for it, what the
// scheduler believes the southbound holds, and its state. Nodes live from
// the first time a key is requested, retrieved or notified until it is
// neither wanted nor in the southbound; a transaction touches only the
// nodes its values reach (their derived values and dependents), which is
// what makes its cost proportional to the change.
//
// What only a failed, rejected or unfinished value needs is kept out of
// line, in nodeExtra: a batch allocates a node per value, and the
// allocation (its bytes, clearing them, the collector scanning them) was
// the largest cost of a batch's walk.
type node struct {
	// The fields every pass over the graph reads (a resync reads, scans
	// and checks every value) come first, in as few cache lines as they
	// fit: a graph of 100,000 values is far larger than the caches.

	key string
	// d is the descriptor claiming the key (nil: a property, or a key no
	// descriptor handles yet).
	d *regDescriptor
	// want is the value the key should have: the last one requested by the
	// northbound, derived from the base, or notified; nil when it should
	// not exist. It stays while the value waits (PENDING, INVALID).
	want any
	// sb is the value in the southbound as the scheduler believes it (as
	// applied or retrieved); nil when absent. avail tells whether it
	// satisfies dependencies: false while it is being removed and after a
	// failed delete, even though the value may still exist.
	sb     any
	base   string // the base of a derived value
	origin Origin
	state  ValueState
	lastOp Operation
	// readGen marks the value as reported by a read (see readMarks).
	readGen uint64
	// markSeq is the walk whose marks mark holds (see keymarks.go).
	markSeq uint64
	// txnSeq is the walk in which the value last failed or was applied,
	// and txnFail tells it failed there: its attempt in the transaction,
	// read and written only in attempts.go (see failedHere, touchedHere).
	txnSeq uint64

	avail bool
	// under is the change the walk has under way on the value (see
	// underWay).
	under   underWay
	txnFail bool // see txnSeq (a bool here, where it packs with the others)
	// dirty is set while the node is listed in the scheduler's dirty
	// nodes; viewDirty while it is listed for its view only (see
	// Scheduler.dirtyView).
	dirty     bool
	viewDirty bool
	mark      keyMark
	// removed is set when the node leaves the graph (see graph.has).
	removed bool
	// derivedWant and derivedSB tell that derivedKVs are what want, and
	// what sb, derive: derivedFor is that very value, which identical
	// cannot recognize when its Go type is neither comparable nor a
	// pointer (see derivesCache). Cleared wherever want, sb or derivedKVs
	// change otherwise (see setWant, setSB).
	derivedWant, derivedSB bool
	// pendingOp is one more than the index in the transaction's record of
	// the value's last operation, when that operation left it PENDING (see
	// walker.compressOp); it fits in the padding before last.
	pendingOp int32
	// recheckTok is the token of the value's last re-check pushed (see
	// walker.pushRecheck); it fits in the padding before last too.
	recheckTok uint32

	// last is the last request for a base value (or, for a derived one,
	// its base's), which retries re-apply; nil for values only retrieved.
	last     *update
	metadata any
	x        *nodeExtra // nil until one of its fields is set (see tidy)
	err      error

	// deps are the dependencies of want, computed when want is set (and
	// indexed in the graph). sbDeps are those of the value in the
	// southbound when it differs from the wanted one (during an update,
	// after a failure): they decide what must not be deleted under it.
	// (In the node, not in nodeExtra: every update sets them.)
	deps, sbDeps []Dependency
	// dep0 is the node of the first dependency, once looked up (see
	// graph.provider).
	dep0 *node
	// dependents are the nodes with a dependency on exactly its key (see
	// graph.exact), sorted by key once asked for (see graph.dependents).
	// dependentOne holds the list while it is one node (see graph.index):
	// most values have one dependent or none, and a list of one was an
	// allocation per value of a batch. It fits in the node's size class.
	dependents   []*node
	dependentOne [1]*node
	// depsFor and derivedFor are the wanted values deps and derivedKVs
	// were computed from: the same value again is not asked again.
	depsFor, derivedFor any
	derivedKVs          []KeyValuePair
	// derived are the keys of the derived values of the value, sorted;
	// derivedOne holds the list when it is one key (see setDerivedKeys).
	derived    []string
	derivedOne [1]string

	// pub is its published entry (see published; the scheduler's
	// statuses point to it once published), kept here so that publishing
	// a node does not look its key up, nor allocate an entry.
	pub pubEntry
}

// nodeExtra holds the fields of a node that only a failure, a rejection,
// a wait or an unfinished change sets. A node gets one when one of them
// is set, and loses it (see tidy) once they are all back to zero: a value
// that failed keeps it, with its retry options, which a later failure of
// a derived value whose base is gone falls back on.
type nodeExtra struct {
	// dErr is set when two descriptors claim the key.
	dErr error
	// depErr is set when Dependencies failed.
	depErr error
	// held are the exceptions of the held value's derived set (see
	// heldset.go): derived values known absent, leftovers of a failed
	// delete.
	held   []heldKey
	fields []string // of an INVALID value

	// failed is set while the value is blocked by a failed operation,
	// with the want it failed with (see failedReq).
	failed   *failedReq
	attempt  int    // failures in a row
	failSeq  uint64 // transaction of the first of them (RetryFor)
	retryGen uint64 // the armed retry, if any
	// retryOpts are the retry options of its last failure (its base's
	// request's, kept for when the base's node is gone).
	retryOpts RetryOptions
	// waitsOn names the dependent whose failed delete keeps this value
	// from being deleted (with delReason, the delete to do once it goes).
	waitsOn   string
	delReason delReason
	// unknown: what the southbound holds of the value is unknown (sb is
	// the last belief): a read-back after a failed operation, which may
	// have done its work, failed. The next transaction reads it before
	// it decides anything (see readUnknown). With sb it is the held
	// tri-state: present, absent or unknown (see heldUnknown). Out of
	// line: only a failed read-back sets it.
	unknown bool
}

// ext returns n's extra fields, to set one.
func (n *node) ext() *nodeExtra {
	if n.x == nil {
		n.x = &nodeExtra{}
	}
	return n.x
}

// tidy drops n's extra fields once none is set any more.
func (n *node) tidy() {
	x := n.x
	if x != nil && x.dErr == nil && x.depErr == nil && x.held == nil &&
		x.fields == nil && x.failed == nil && x.attempt == 0 && x.failSeq == 0 && x.retryGen == 0 &&
		x.retryOpts == (RetryOptions{}) && x.waitsOn == "" && x.delReason == 0 && !x.unknown {
		n.x = nil
	}
}

// The getters of the extra fields return their zero values for a node
// without them; the setters allocate them only for a value to keep.

func (n *node) dErr() error {
	if n.x == nil {
		return nil
	}
	return n.x.dErr
}

func (n *node) setDErr(err error) {
	if err != nil || n.x != nil {
		n.ext().dErr = err
	}
}

func (n *node) depErr() error {
	if n.x == nil {
		return nil
	}
	return n.x.depErr
}

func (n *node) setDepErr(err error) {
	if err != nil || n.x != nil {
		n.ext().depErr = err
	}
}

func (n *node) fields() []string {
	if n.x == nil {
		return nil
	}
	return n.x.fields
}

func (n *node) setFields(f []string) {
	if f != nil || n.x != nil {
		n.ext().fields = f
	}
}

func (n *node) failed() any {
	if n.x == nil || n.x.failed == nil {
		return nil
	}
	return n.x.failed.want
}

// failedReq is the failure part of the model: the value's last operation
// failed, with want (nil for a delete), and it is not attempted again
// until its retry, a resync or a new request (see node.blocked).
type failedReq struct {
	want any
}

// blocked tells whether a failed operation blocks n until its want
// changes, a resync or its retry: it has a failure (see failedReq).
func (n *node) blocked() bool {
	return n.x != nil && n.x.failed != nil
}

func (n *node) attempt() int {
	if n.x == nil {
		return 0
	}
	return n.x.attempt
}

// resetAttempts starts n's count of failures in a row over.
func (n *node) resetAttempts() {
	if n.x != nil {
		n.x.attempt = 0
	}
}

func (n *node) failSeq() uint64 {
	if n.x == nil {
		return 0
	}
	return n.x.failSeq
}

func (n *node) retryGen() uint64 {
	if n.x == nil {
		return 0
	}
	return n.x.retryGen
}

func (n *node) retryOpts() RetryOptions {
	if n.x == nil {
		return RetryOptions{}
	}
	return n.x.retryOpts
}

func (n *node) waitsOn() string {
	if n.x == nil {
		return ""
	}
	return n.x.waitsOn
}

// heldUnknown tells whether what the southbound holds of n is unknown
// (see nodeExtra.unknown).
func (n *node) heldUnknown() bool { return n.x != nil && n.x.unknown }

// setHeldUnknown marks what the southbound holds of n unknown, or known
// again.
func (n *node) setHeldUnknown(u bool) {
	if u || n.x != nil {
		n.ext().unknown = u
		n.tidy()
	}
}

func (n *node) delReason() delReason {
	if n.x == nil {
		return 0
	}
	return n.x.delReason
}

// underWay is the change a walk has under way on a value: a change is
// several frames of the walk (see walk.go), and what runs in between must
// know that the value is on its way out or to another value.
type underWay uint8

const (
	// underDelete: its delete is under way (derived values and dependents
	// first, the value last).
	underDelete underWay = 1 << iota
	// underUpdate: its update is under way (obsolete derived values
	// first, then the value, then its new derived values).
	underUpdate
	// underRecheck: a value it may depend on was created while its delete
	// was under way: once deleted into PENDING, it is checked again.
	underRecheck
)

// deleting tells whether n's delete is under way.
func (n *node) deleting() bool { return n.under&underDelete != 0 }

// updating tells whether n's update is under way.
func (n *node) updating() bool { return n.under&underUpdate != 0 }

// update is a request for a base value: the transaction that made it,
// with its retry options (shared by the transaction's requests; nil: no
// retry). A nil value requests a delete. revert is set for the requests
// of a transaction with revert and for its undos alike; undo only for an
// undo's, which a stopped transaction's resume finishes where it leaves
// the transaction's own removal not reached as it is (see midChange).
type update struct {
	value  any
	seq    uint64
	retry  *RetryOptions
	revert bool
	undo   bool
}

// exists tells whether the node's value is in the southbound.
func (n *node) exists() bool { return n.sb != nil }

// implicit values have no operations of their own: properties (derived
// values without a descriptor) and values owned by the southbound.
func (n *node) implicit() bool { return n.d == nil || n.origin == FromSB }

// availModel is what the model says of whether n's value satisfies
// dependencies: it is held, not on its way out, and not after its delete
// failed.
func (n *node) availModel() bool {
	return n.exists() && !n.deleting() && !(n.blocked() && n.lastOp == OpDelete)
}
