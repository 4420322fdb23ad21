// Package kvtest provides a recording fake southbound for testing the KV
// scheduler and descriptors built on it.
package kvtest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Op is one operation the southbound received.
type Op struct {
	Descriptor string
	Operation  string // "create", "update", "delete" or "retrieve"
	Key        string
	Value      any
	// Err is the error the operation returned (injected, or a create of
	// a key held, an update or delete of one not held): the southbound
	// did not change.
	Err error
}

// String formats the op as "create key".
func (o Op) String() string { return o.Operation + " " + o.Key }

type entry struct {
	value    any
	metadata any
	sbOwned  bool
}

// Southbound is an in-memory southbound that records every call and can
// fail or hold chosen operations. It is safe for concurrent use. Its
// operations take no time and ignore their context, except those held by
// BlockNext.
type Southbound struct {
	mu     sync.Mutex
	values map[string]*entry
	ops    []Op
	fails  map[string][]error  // "op key" -> errors returned by the next calls
	blocks map[string][]*Block // "op key" -> calls to hold
	nextMD int
}

// New returns an empty southbound.
func New() *Southbound {
	return &Southbound{values: map[string]*entry{}, fails: map[string][]error{}, blocks: map[string][]*Block{}}
}

// Block holds one call of the southbound (see BlockNext), as a southbound
// that does not answer would.
type Block struct {
	entered  chan struct{}
	released chan struct{}
	once     sync.Once
	ctxErr   chan error
}

// Entered is closed once the held call has begun waiting.
func (b *Block) Entered() <-chan struct{} { return b.entered }

// Release lets the held call go on as usual (it may not have begun yet).
func (b *Block) Release() { b.once.Do(func() { close(b.released) }) }

// Returned receives, once the held call stops waiting, the error of its
// context if that is what ended the wait, else nil.
func (b *Block) Returned() <-chan error { return b.ctxErr }

// BlockNext makes the next call of operation ("create", "update",
// "delete" or "retrieve"; for "retrieve" the key is the descriptor name)
// on key wait, before it records or changes anything, until its context
// ends or the Block is released. A call whose context ends first returns
// the context's error and leaves the southbound as it was: the caller gave
// up before the southbound acted.
func (sb *Southbound) BlockNext(operation, key string) *Block {
	b := &Block{entered: make(chan struct{}), released: make(chan struct{}), ctxErr: make(chan error, 1)}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	k := operation + " " + key
	sb.blocks[k] = append(sb.blocks[k], b)
	return b
}

// wait holds the call of operation on key if BlockNext asked for it.
func (sb *Southbound) wait(ctx context.Context, operation, key string) error {
	sb.mu.Lock()
	if len(sb.blocks) == 0 {
		// Nothing held (the common case): no key built per call, so that
		// benchmarks measure the scheduler rather than this southbound.
		sb.mu.Unlock()
		return nil
	}
	k := operation + " " + key
	bs := sb.blocks[k]
	if len(bs) == 0 {
		sb.mu.Unlock()
		return nil
	}
	b := bs[0]
	if len(bs) == 1 {
		delete(sb.blocks, k)
	} else {
		sb.blocks[k] = bs[1:]
	}
	sb.mu.Unlock()
	close(b.entered)
	select {
	case <-b.released:
		b.ctxErr <- nil
		return nil
	case <-ctx.Done():
		b.ctxErr <- ctx.Err()
		return ctx.Err()
	}
}

// FailNext makes the next len(errs) calls of operation ("create",
// "update", "delete" or "retrieve") on key fail with errs in order. For
// "retrieve" the key is the descriptor name.
func (sb *Southbound) FailNext(operation, key string, errs ...error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	k := operation + " " + key
	sb.fails[k] = append(sb.fails[k], errs...)
}

// ClearFailures drops the failures not yet returned.
func (sb *Southbound) ClearFailures() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	clear(sb.fails)
}

func (sb *Southbound) injected(operation, key string) error {
	if len(sb.fails) == 0 {
		return nil // as in wait
	}
	k := operation + " " + key
	errs := sb.fails[k]
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		delete(sb.fails, k)
	} else {
		sb.fails[k] = errs[1:]
	}
	return errs[0]
}

// failedLast records err as the error of the last recorded operation, and
// returns it. The caller holds sb.mu.
func (sb *Southbound) failedLast(err error) error {
	sb.ops[len(sb.ops)-1].Err = err
	return err
}

// Set puts a value into the southbound behind the scheduler's back (drift
// or pre-existing state). Owned values are reported with origin FromSB.
func (sb *Southbound) Set(key string, value any, owned bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.nextMD++
	sb.values[key] = &entry{value: value, metadata: sb.nextMD, sbOwned: owned}
}

// Remove deletes a value behind the scheduler's back.
func (sb *Southbound) Remove(key string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	delete(sb.values, key)
}

// Values returns a copy of the current content.
func (sb *Southbound) Values() map[string]any {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make(map[string]any, len(sb.values))
	for k, e := range sb.values {
		out[k] = e.value
	}
	return out
}

// Ops returns the recorded operations, excluding retrieves unless asked.
func (sb *Southbound) Ops(withRetrieve bool) []Op {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	var out []Op
	for _, o := range sb.ops {
		if withRetrieve || o.Operation != "retrieve" {
			out = append(out, o)
		}
	}
	return out
}

// OpStrings returns Ops(false) formatted as "create key".
func (sb *Southbound) OpStrings() []string {
	var out []string
	for _, o := range sb.Ops(false) {
		out = append(out, o.String())
	}
	return out
}

// ResetOps forgets the recorded operations.
func (sb *Southbound) ResetOps() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.ops = nil
}

// Descriptor returns a descriptor named name for the keys with prefix,
// whose callbacks operate on this southbound. The metadata of a value is
// an int assigned at creation. Adjust the other fields as needed.
func (sb *Southbound) Descriptor(name, prefix string) *kvscheduler.Descriptor {
	return &kvscheduler.Descriptor{
		Name:         name,
		NBKeyPrefix:  prefix,
		KeySelector:  func(key string) bool { return strings.HasPrefix(key, prefix) },
		KeyLabel:     func(key string) string { return strings.TrimPrefix(key, prefix) },
		WithMetadata: true,
		Create: func(ctx context.Context, key string, value any) (any, error) {
			return sb.create(ctx, name, key, value)
		},
		Update: func(ctx context.Context, key string, _, value any, md any) (any, error) {
			return sb.update(ctx, name, key, value, md)
		},
		Delete: func(ctx context.Context, key string, value any, _ any) error {
			return sb.delete(ctx, name, key, value)
		},
		Retrieve: func(ctx context.Context, _ []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			return sb.retrieve(ctx, name, prefix)
		},
		// Reads the given keys only, recording a "retrieve" op per key
		// (Key is the value's key), so that tests can count what a scoped
		// resync read. Failures injected for "retrieve" of name apply.
		RetrieveKeys: func(ctx context.Context, keys []string, _ []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			return sb.retrieveKeys(ctx, name, prefix, keys)
		},
	}
}

// create is the Create of descriptor name: it creates key, which must not
// be held, and returns its metadata.
func (sb *Southbound) create(ctx context.Context, name, key string, value any) (any, error) {
	if err := sb.wait(ctx, "create", key); err != nil {
		return nil, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.ops = append(sb.ops, Op{Descriptor: name, Operation: "create", Key: key, Value: value})
	if err := sb.injected("create", key); err != nil {
		return nil, sb.failedLast(err)
	}
	if _, ok := sb.values[key]; ok {
		return nil, sb.failedLast(fmt.Errorf("kvtest: %s already exists", key))
	}
	sb.nextMD++
	sb.values[key] = &entry{value: value, metadata: sb.nextMD}
	return sb.nextMD, nil
}

// update is the Update of descriptor name: it changes the value of key,
// which must be held, and keeps its metadata md.
func (sb *Southbound) update(ctx context.Context, name, key string, value, md any) (any, error) {
	if err := sb.wait(ctx, "update", key); err != nil {
		return nil, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.ops = append(sb.ops, Op{Descriptor: name, Operation: "update", Key: key, Value: value})
	if err := sb.injected("update", key); err != nil {
		return nil, sb.failedLast(err)
	}
	e, ok := sb.values[key]
	if !ok {
		return nil, sb.failedLast(fmt.Errorf("kvtest: %s does not exist", key))
	}
	e.value = value
	return md, nil
}

// delete is the Delete of descriptor name: it removes key, which must be
// held.
func (sb *Southbound) delete(ctx context.Context, name, key string, value any) error {
	if err := sb.wait(ctx, "delete", key); err != nil {
		return err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.ops = append(sb.ops, Op{Descriptor: name, Operation: "delete", Key: key, Value: value})
	if err := sb.injected("delete", key); err != nil {
		return sb.failedLast(err)
	}
	if _, ok := sb.values[key]; !ok {
		return sb.failedLast(fmt.Errorf("kvtest: %s does not exist", key))
	}
	delete(sb.values, key)
	return nil
}

// retrieve is the Retrieve of descriptor name: every value held under
// prefix, in key order, recorded as one "retrieve" op.
func (sb *Southbound) retrieve(ctx context.Context, name, prefix string) ([]kvscheduler.KVWithMetadata, error) {
	if err := sb.wait(ctx, "retrieve", name); err != nil {
		return nil, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.ops = append(sb.ops, Op{Descriptor: name, Operation: "retrieve", Key: name})
	if err := sb.injected("retrieve", name); err != nil {
		return nil, err
	}
	var out []kvscheduler.KVWithMetadata
	for k, e := range sb.values {
		if strings.HasPrefix(k, prefix) {
			out = append(out, e.read(k))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// retrieveKeys is the RetrieveKeys of descriptor name: the values held
// of keys under prefix, each key recorded as a "retrieve" op.
func (sb *Southbound) retrieveKeys(ctx context.Context, name, prefix string, keys []string) ([]kvscheduler.KVWithMetadata, error) {
	if err := sb.wait(ctx, "retrieve", name); err != nil {
		return nil, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if err := sb.injected("retrieve", name); err != nil {
		return nil, err
	}
	var out []kvscheduler.KVWithMetadata
	for _, k := range keys {
		sb.ops = append(sb.ops, Op{Descriptor: name, Operation: "retrieve", Key: k})
		if e, ok := sb.values[k]; ok && strings.HasPrefix(k, prefix) {
			out = append(out, e.read(k))
		}
	}
	return out, nil
}

// read is e as a read reports it under key: the southbound's own values
// with origin FromSB, the others with none (the scheduler decides).
func (e *entry) read(key string) kvscheduler.KVWithMetadata {
	o := kvscheduler.UnknownOrigin
	if e.sbOwned {
		o = kvscheduler.FromSB
	}
	return kvscheduler.KVWithMetadata{Key: key, Value: e.value, Metadata: e.metadata, Origin: o}
}
