package kvscheduler

import (
	"context"
	"reflect"
	"strings"
)

// Origin tells who created a value.
type Origin int

const (
	// UnknownOrigin lets the scheduler decide the origin of a retrieved
	// value: as requested if the northbound requested the key, else that of
	// its correlate entry (in the first full resync, the transaction's
	// values, which are northbound-owned), else northbound-owned if its key
	// has the descriptor's NB key prefix, else owned by the southbound.
	// Unlike the reference, the key's history is not consulted: a value
	// the northbound deleted and that reappears is the southbound's unless
	// its key has the NB key prefix.
	UnknownOrigin Origin = iota
	// FromNB marks values requested by the northbound.
	FromNB
	// FromSB marks values the southbound created on its own; the scheduler
	// never removes them.
	FromSB
)

// KeyValuePair is a key with its value.
type KeyValuePair struct {
	Key   string
	Value any
}

// KVWithMetadata is a value as retrieved from the southbound.
type KVWithMetadata struct {
	Key      string
	Value    any
	Metadata any
	Origin   Origin
}

// Dependency is one requirement of a value: another value that must exist.
// Either Key is set (exactly that key), or AnyOf: at least one existing key
// must have one of the prefixes or match the selector.
type Dependency struct {
	// Label names the dependency in statuses and logs.
	Label string
	// Key is the exact key required.
	Key string
	// AnyOf is used when Key is empty.
	AnyOf AnyOfDependency
	// Kind says what the dependency means once the value exists: Requires
	// (the zero value) or OrderingOnly; see DependencyKind.
	Kind DependencyKind

	// matches indexes the keys AnyOf.KeySelector selects, once the
	// scheduler has asked the descriptor for the dependency (see
	// selectorMatches).
	matches *selectorMatches
}

// AnyOfDependency is satisfied by any existing key matching a prefix or the
// selector.
//
// KeySelector must give the same answer for a key every time: the
// scheduler asks it about every key once when it gets the dependency (a
// value's dependencies are asked again only when the value changes) and
// about each key added later, and remembers the keys it selects. Prefixes
// cost less: they are indexed for all dependencies at once.
type AnyOfDependency struct {
	KeyPrefixes []string
	KeySelector func(key string) bool
}

func (d Dependency) matchesKey(key string) bool {
	if d.Key != "" {
		return key == d.Key
	}
	for _, p := range d.AnyOf.KeyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return d.AnyOf.KeySelector != nil && d.AnyOf.KeySelector(key)
}

func (d Dependency) name() string {
	if d.Label != "" {
		return d.Label
	}
	if d.Key != "" {
		return d.Key
	}
	return "any-of" + strings.Join(d.AnyOf.KeyPrefixes, "|")
}

// Descriptor teaches the scheduler how to handle one kind of value. Only
// Name and KeySelector are required; a descriptor without Create is
// read-only (its values can only be obtained from the southbound).
// Callbacks are called from the scheduler's goroutine, one at a time; a
// callback that panics fails its operation.
//
// The callbacks that talk to the southbound (Create, Update, Delete,
// Retrieve, RetrieveKeys) get the context of the work they do, and must
// return soon after it ends: the scheduler's goroutine, and with it every
// later transaction, waits for them. For a blocking Commit it is a context
// that ends when the Commit's ctx ends or the scheduler closes, so that a
// caller who gives up stops the request in flight (the event loop's
// transactions and resyncs, committed through loopcommit, run under the
// loop's context); for work no caller waits for (NonBlocking transactions,
// retries, notifications, registrations) it is the scheduler's lifetime
// context (Scheduler.Context). An operation whose
// callback returns an error because its context ended fails like any
// other: it is recorded, read back and reported, and the transaction stops
// before its next operation (see Txn.Commit). The other callbacks are pure
// functions of their arguments and get no context.
type Descriptor struct {
	// Name identifies the descriptor; unique per scheduler.
	Name string
	// KeySelector claims keys for the descriptor.
	KeySelector func(key string) bool
	// NBKeyPrefix is the prefix of the keys the northbound configures; used
	// to decide ownership of retrieved values and to detect overlaps.
	NBKeyPrefix string
	// KeyLabel shortens a key to a label unique within the descriptor; the
	// label indexes the metadata map. Defaults to the key.
	KeyLabel func(key string) string
	// ValueComparator tells whether two values are equivalent (no update
	// needed). Defaults to reflect.DeepEqual.
	ValueComparator func(key string, oldValue, newValue any) bool
	// WithMetadata enables the descriptor's metadata map.
	WithMetadata bool
	// Validate rejects invalid values; return an *InvalidValueError to name
	// the offending fields.
	Validate func(key string, value any) error
	// Create applies a new value and returns its metadata.
	Create func(ctx context.Context, key string, value any) (metadata any, err error)
	// Delete removes a value.
	Delete func(ctx context.Context, key string, value any, metadata any) error
	// Update changes a value in place; nil means every change re-creates.
	Update func(ctx context.Context, key string, oldValue, newValue any, oldMetadata any) (newMetadata any, err error)
	// UpdateWithRecreate tells whether a change must be applied by delete and
	// create instead of Update.
	UpdateWithRecreate func(key string, oldValue, newValue any, metadata any) bool
	// Retrieve reads the values of this descriptor from the southbound:
	// base values only. The scheduler derives their derived values
	// (DerivedValues) as it does for requested values. Whether a derived
	// value exists is told by one read: that of its own descriptor (the
	// one whose KeySelector claims its key) when that is not its base's
	// descriptor and has Retrieve; it then reads the value as any other
	// (not reported: gone; reported with another value: changed).
	// Otherwise, and in particular when the base's descriptor claims its
	// own derived keys (the VPP-Agent's setup), the derived value exists
	// as the base's read derives it: a derived value that Retrieve
	// returns too is the same value, and one it leaves out is not gone
	// for that. correlate helps the
	// descriptor recognise the values (e.g. to fill defaults): in a full
	// resync that is the scheduler's first resync of any type, the values
	// the transaction requests (no metadata); otherwise the values the
	// scheduler believes exist, with their metadata.
	Retrieve func(ctx context.Context, correlate []KVWithMetadata) ([]KVWithMetadata, error)
	// RetrieveKeys reads only the values of keys (all claimed by this
	// descriptor) from the southbound, for a scoped downstream resync
	// (Txn.WithResyncKeys); a key it does not return does not exist.
	// correlate holds the desired values among keys. Optional: without it
	// a scoped resync calls Retrieve and keeps the values of keys, which is
	// correct but costs as much as reading everything.
	RetrieveKeys func(ctx context.Context, keys []string, correlate []KVWithMetadata) ([]KVWithMetadata, error)
	// IsRetriableFailure tells whether a failed operation should be retried.
	// Defaults to true.
	IsRetriableFailure func(err error) bool
	// DerivedValues returns the values derived from value. A derived value
	// without a descriptor is a property: it exists while its base exists,
	// with no operations of its own.
	DerivedValues func(key string, value any) []KeyValuePair
	// Dependencies lists the values that must exist before value is created.
	Dependencies func(key string, value any) []Dependency
	// RetrieveDependencies names the descriptors whose Retrieve must run
	// before this descriptor's.
	RetrieveDependencies []string
}

func (d *Descriptor) label(key string) string {
	if d.KeyLabel != nil {
		label := key // a KeyLabel that panics labels with the key
		_ = guard(func() error { label = d.KeyLabel(key); return nil })
		return label
	}
	return key
}

func (d *Descriptor) equivalent(key string, a, b any) bool {
	if d.ValueComparator != nil {
		return d.ValueComparator(key, a, b)
	}
	return reflect.DeepEqual(a, b)
}
