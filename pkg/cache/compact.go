package cache

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	kjson "sigs.k8s.io/json"
)

// DefaultHotObjects is how many decoded objects a compact cache keeps by
// default (Options.HotObjects): the most recently read ones, which a
// handler's Get of a key it just saw finds without decoding.
const DefaultHotObjects = 256

// compactObject is what a compact cache stores instead of an object: the
// object encoded (protobuf for built-in kinds, JSON for the others), and
// what the cache reads of it without decoding it: its namespace and name
// (the store's key and the namespace index), its resourceVersion (how the
// informer tells a resync from a change) and its labels (so that a List by
// label selector decodes only the objects it returns), in compactMeta,
// which keeps nothing else: every read through the informer's store,
// indexers and handlers decodes it, so no caller ever sees this form.
type compactObject struct {
	compactMeta
	gvk   *schema.GroupVersionKind
	data  []byte
	codec *codec
	// packed says data is compressed (compact_pack.go).
	packed bool
	// hot is the decoded object while it is among the codec's most
	// recently read ones.
	hot atomic.Pointer[hotObject]
}

type hotObject struct{ obj runtime.Object }

// protoCodec is implemented by the built-in kinds' generated types.
type protoCodec interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// codec encodes and decodes the objects of one informer.
type codec struct {
	typ   reflect.Type // the object's struct type
	proto bool

	// scratch holds the buffers objects are compressed into before each is
	// copied to a slice of its exact size; encoded, the buffers they are
	// encoded into before they are compressed (compact_encode.go).
	scratch, encoded sync.Pool

	mu     sync.Mutex
	labels labelSets                                            // the label sets objects share
	gvks   map[schema.GroupVersionKind]*schema.GroupVersionKind // interned, one per kind seen
	ring   []*compactObject                                     // the hot objects, oldest at next
	next   int

	// wireOff turns off reading objects from the wire (compact_wire.go):
	// set when a transform is set on the informer.
	wireOff atomic.Bool
	// wired counts the objects read from the wire, for tests.
	wired atomic.Int64
}

// newCodec returns the codec for objects like example, which must be a
// pointer to a struct; hot is how many decoded objects it keeps.
func newCodec(example runtime.Object, hot int) (*codec, error) {
	t := reflect.TypeOf(example)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("compact cache: %T is not a pointer to a struct", example)
	}
	if hot <= 0 {
		hot = DefaultHotObjects
	}
	_, proto := example.(protoCodec)
	return &codec{typ: t.Elem(), proto: proto, gvks: map[schema.GroupVersionKind]*schema.GroupVersionKind{},
		ring: make([]*compactObject, hot)}, nil
}

// encode is the last step of the informer's transform. An object already
// encoded (client-go hands stored objects to the transform again on
// resync) and objects it does not know pass unchanged.
func (c *codec) encode(obj any) (any, error) {
	if _, ok := obj.(*compactObject); ok {
		return obj, nil
	}
	ro, ok := obj.(runtime.Object)
	if !ok || reflect.TypeOf(ro) != reflect.PointerTo(c.typ) {
		return obj, nil
	}
	m, err := meta.Accessor(ro)
	if err != nil {
		return obj, nil
	}
	out := &compactObject{codec: c, gvk: c.intern(ro.GetObjectKind().GroupVersionKind())}
	err = c.marshal(ro, func(data []byte) { out.data, out.packed = c.keepPacked(data) })
	if err != nil {
		return nil, fmt.Errorf("compact cache: encode %s/%s: %w", m.GetNamespace(), m.GetName(), err)
	}
	out.Namespace, out.Name, out.ResourceVersion = m.GetNamespace(), m.GetName(), m.GetResourceVersion()
	// The decoded object is garbage from here on; its labels map is kept,
	// not copied, or one equal to it kept before is shared, and nothing
	// writes to it.
	c.mu.Lock()
	out.Labels = c.labels.share(m.GetLabels())
	c.mu.Unlock()
	return out, nil
}

// compacting returns transform followed by encode; for a nil codec,
// transform. Objects already stored skip the transform too: client-go
// hands them to it again on resync, and a user's transform expects the
// kind, not the stored form.
func (c *codec) compacting(transform cache.TransformFunc) cache.TransformFunc {
	if c == nil {
		return transform
	}
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *compactObject:
			return obj, nil
		case *wireObject:
			// Read from the wire (compact_wire.go) without managedFields,
			// which is all the default transform takes away. Another
			// transform is given the object decoded.
			if transform == nil || isStripMetadata(transform) {
				return o.compactObject, nil
			}
			var err error
			if obj, err = o.decode(false); err != nil {
				return nil, err
			}
		}
		if transform != nil {
			var err error
			if obj, err = transform(obj); err != nil {
				return nil, err
			}
		}
		return c.encode(obj)
	}
}

// intern returns the codec's one copy of gvk, so that objects of a kind
// share their type's strings instead of holding three each.
func (c *codec) intern(gvk schema.GroupVersionKind) *schema.GroupVersionKind {
	if gvk.Empty() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.gvks[gvk]
	if !ok {
		p = &gvk
		c.gvks[gvk] = p
	}
	return p
}

// object returns the decoded object: the hot copy when there is one.
// Objects read from the cache are shared, as client-go's are: callers must
// not change them.
func (o *compactObject) object() (runtime.Object, error) {
	return o.decode(true)
}

// decode returns the decoded object; keep makes it hot, in place of the
// oldest hot one. Reads of many objects at once (List) do not keep them:
// they would push out the objects that are read again and again.
func (o *compactObject) decode(keep bool) (runtime.Object, error) {
	if h := o.hot.Load(); h != nil {
		return h.obj, nil
	}
	c := o.codec
	data, err := o.unpack()
	if err != nil {
		return nil, err
	}
	obj := reflect.New(c.typ).Interface().(runtime.Object)
	u, isUnstructured := obj.(*unstructured.Unstructured)
	if p, ok := obj.(protoCodec); ok && c.proto {
		err = p.Unmarshal(data)
	} else if isUnstructured {
		// Decoded as a map, not through Unstructured's UnmarshalJSON, which
		// refuses an object without a kind: a kind's Transform may have
		// trimmed it, and the default cache holds such objects too.
		err = kjson.UnmarshalCaseSensitivePreserveInts(data, &u.Object)
	} else {
		// apimachinery's JSON serializer decodes with this function:
		// integers in free-form fields stay int64 (encoding/json would
		// turn them into float64 and round those past 2^53), and field
		// names match case-sensitively, as the client decoded them.
		err = kjson.UnmarshalCaseSensitivePreserveInts(data, obj)
	}
	if err != nil {
		return nil, fmt.Errorf("compact cache: decode %s/%s: %w", o.Namespace, o.Name, err)
	}
	if o.gvk != nil {
		// Protobuf does not carry the type; the object had it when stored.
		obj.GetObjectKind().SetGroupVersionKind(*o.gvk)
	} else if !isUnstructured {
		// A typed object is stored without its type (the client's decoder
		// clears it), but JSON kept from the wire (compact_wire_json.go)
		// still writes it: cleared again, as the client's decoder clears it.
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	if keep {
		c.keep(o, obj)
	}
	return obj, nil
}

// keep makes obj o's hot copy, in place of the oldest one.
func (c *codec) keep(o *compactObject, obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !o.hot.CompareAndSwap(nil, &hotObject{obj}) {
		return // another reader decoded it first and keeps it
	}
	if old := c.ring[c.next]; old != nil {
		old.hot.Store(nil)
	}
	c.ring[c.next] = o
	c.next = (c.next + 1) % len(c.ring)
}

// decoded returns what a stored item is to its readers: a compact object
// decoded (and kept hot), a tombstone with its object decoded, anything
// else as it is.
func decoded(obj any) (any, error) { return decodedFor(obj, true) }

func decodedFor(obj any, keep bool) (any, error) {
	switch o := obj.(type) {
	case *compactObject:
		return o.decode(keep)
	case cache.DeletedFinalStateUnknown:
		if c, ok := o.Obj.(*compactObject); ok {
			inner, err := c.decode(keep)
			if err != nil {
				return nil, err
			}
			return cache.DeletedFinalStateUnknown{Key: o.Key, Obj: inner}, nil
		}
	}
	return obj, nil
}

// decodedItem decodes the item of a store's Get.
func decodedItem(item any, exists bool, err error) (any, bool, error) {
	if err != nil || !exists {
		return item, exists, err
	}
	item, err = decoded(item)
	return item, err == nil, err
}

// decodedAll decodes every item of a list read from the store, in place,
// keeping none hot.
func decodedAll(items []any, err error) ([]any, error) {
	if err != nil {
		return nil, err
	}
	for i, item := range items {
		if items[i], err = decodedFor(item, false); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// decodingIndexers returns indexers that see decoded objects: users' index
// functions expect their kind, not the stored form. client-go's namespace
// index function reads only the namespace, which the stored form has: it
// gets that form, and the informer decodes nothing to index an object by
// namespace (every typed controller adds that index).
func decodingIndexers(indexers cache.Indexers) cache.Indexers {
	out := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if readsOnlyNamespace(fn) {
			out[name] = fn
			continue
		}
		out[name] = func(obj any) ([]string, error) {
			o, err := decoded(obj)
			if err != nil {
				return nil, err
			}
			return fn(o)
		}
	}
	return out
}

// readsOnlyNamespace reports whether fn is client-go's namespace index
// function, which reads nothing of an object but its namespace. Functions
// are compared by their code; the one compared with is a plain function,
// not a closure, so no other function shares its code.
func readsOnlyNamespace(fn cache.IndexFunc) bool {
	return fn != nil && reflect.ValueOf(fn).Pointer() == reflect.ValueOf(cache.MetaNamespaceIndexFunc).Pointer()
}

// KeyOnlyHandler is implemented by event handlers that read nothing of the
// objects they are given but their namespace, name and resourceVersion
// (such as controllers, which queue keys and read the object when they
// handle the key). A compact cache gives them its stored form, which has
// those, without decoding the object for them.
type KeyOnlyHandler interface {
	cache.ResourceEventHandler
	// ReadsOnlyKeys marks the handler; it is never called.
	ReadsOnlyKeys()
}

// decodingHandler hands a compact cache's objects to a handler decoded.
// An object that cannot be decoded (which would take a bug in the codec:
// it decodes only what it encoded) is reported and not delivered.
type decodingHandler struct {
	handler cache.ResourceEventHandler
	failed  func(error)
}

func (h decodingHandler) OnAdd(obj any, isInInitialList bool) {
	if o, err := decoded(obj); err != nil {
		h.failed(err)
	} else {
		h.handler.OnAdd(o, isInInitialList)
	}
}

func (h decodingHandler) OnUpdate(oldObj, newObj any) {
	o, err := decoded(oldObj)
	if err != nil {
		h.failed(err)
		return
	}
	n, err := decoded(newObj)
	if err != nil {
		h.failed(err)
		return
	}
	h.handler.OnUpdate(o, n)
}

func (h decodingHandler) OnDelete(obj any) {
	if o, err := decoded(obj); err != nil {
		h.failed(err)
	} else {
		h.handler.OnDelete(o)
	}
}
