package kvscheduler

import (
	"fmt"
	"slices"
	"strings"
)

// registry holds the registered descriptors; it is owned by the scheduler
// goroutine except for the metadata maps, which are safe for readers.
type registry struct {
	byName map[string]*regDescriptor
	order  []*regDescriptor // registration order
}

type regDescriptor struct {
	*Descriptor
	md *metadataMap
	// batch counts the new values of a transaction it claims, while the
	// transaction's nodes are made (see processTxn).
	batch int
}

func newRegistry() *registry {
	return &registry{byName: map[string]*regDescriptor{}}
}

// check refuses a descriptor that is invalid, clashes with a registered
// one, or claims keys of g that already have values (see claimsValues).
func (r *registry) check(d *Descriptor, g *graph) error {
	if d == nil {
		return fmt.Errorf("%w: nil", ErrInvalidDescriptor)
	}
	if d.Name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidDescriptor)
	}
	if d.KeySelector == nil {
		return fmt.Errorf("%w %q: nil KeySelector", ErrInvalidDescriptor, d.Name)
	}
	if _, dup := r.byName[d.Name]; dup {
		return fmt.Errorf("%w: duplicate name %q", ErrInvalidDescriptor, d.Name)
	}
	for _, o := range r.order {
		if d.NBKeyPrefix != "" && o.NBKeyPrefix != "" &&
			(strings.HasPrefix(d.NBKeyPrefix, o.NBKeyPrefix) || strings.HasPrefix(o.NBKeyPrefix, d.NBKeyPrefix)) {
			return fmt.Errorf("%w %q: NB key prefix %q overlaps %q of %q", ErrInvalidDescriptor,
				d.Name, d.NBKeyPrefix, o.NBKeyPrefix, o.Name)
		}
	}
	// Dependencies on descriptors registered later are allowed; a cycle can
	// only close through the new descriptor.
	if _, err := r.retrieveOrder(d); err != nil {
		return err
	}
	return claimsValues(d, g)
}

// maxNamedKeys bounds the keys a refused registration names.
const maxNamedKeys = 10

// claimsValues refuses a descriptor registered late whose KeySelector
// claims keys that already have values: a value of another descriptor
// (requested, or in the southbound), or one in the southbound that no
// descriptor handles (a property, a key the southbound notified). Taking
// such a value over would leave the scheduler believing that the new
// descriptor created what it never did: its delete would run nobody's
// Delete (the value orphaned in the southbound) or the new descriptor's
// Delete on something absent (its base then never deleted). Keys without a
// descriptor that are only requested (UNIMPLEMENTED) are what a late
// registration is for: it applies them.
func claimsValues(d *Descriptor, g *graph) error {
	var keys []string
	for k, n := range g.nodes {
		if (n.d != nil || n.exists()) && safeSelect(d.KeySelector, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	named, more := keys, ""
	if len(keys) > maxNamedKeys {
		named, more = keys[:maxNamedKeys], fmt.Sprintf(" and %d more", len(keys)-maxNamedKeys)
	}
	return fmt.Errorf("%w %q: its KeySelector claims keys that already have values "+
		"(of another descriptor, or in the southbound without one): %s%s; register it before such values exist",
		ErrInvalidDescriptor, d.Name, strings.Join(named, ", "), more)
}

func (r *registry) add(d *Descriptor) *regDescriptor {
	rd := &regDescriptor{Descriptor: d, md: newMetadataMap()}
	r.byName[d.Name] = rd
	r.order = append(r.order, rd)
	return rd
}

// derives tells whether a registered descriptor derives values.
func (r *registry) derives() bool {
	for _, d := range r.order {
		if d.DerivedValues != nil {
			return true
		}
	}
	return false
}

// selects tells whether d claims key; a KeySelector that panics claims
// nothing.
func (d *regDescriptor) selects(key string) bool { return safeSelect(d.KeySelector, key) }

// rejects tells whether d's Validate rejects value v of key (or panics
// on it, see guard).
func (d *regDescriptor) rejects(key string, v any) bool {
	return d.Validate != nil && guard(func() error { return d.Validate(key, v) }) != nil
}

// owner finds the descriptor claiming key; it is looked up once per node
// (and again when a descriptor is registered), so it is not cached.
func (r *registry) owner(key string) (*regDescriptor, error) {
	var found *regDescriptor
	for _, d := range r.order {
		if !d.selects(key) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%w: %q by %q and %q", ErrAmbiguousKey, key, found.Name, d.Name)
		}
		found = d
	}
	return found, nil
}

// retrieveOrder returns the descriptors (with extra, if not nil) ordered so
// that every descriptor follows its retrieve dependencies.
func (r *registry) retrieveOrder(extra *Descriptor) ([]*Descriptor, error) {
	all := map[string]*Descriptor{}
	var names []string
	for _, d := range r.order {
		all[d.Name] = d.Descriptor
		names = append(names, d.Name)
	}
	if extra != nil {
		all[extra.Name] = extra
		names = append(names, extra.Name)
	}
	const (
		unseen = iota
		visiting
		done
	)
	mark := map[string]int{}
	var out []*Descriptor
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		d, ok := all[n]
		if !ok {
			return nil // not registered (yet)
		}
		switch mark[n] {
		case visiting:
			return fmt.Errorf("%w: retrieve dependency cycle %s", ErrInvalidDescriptor,
				strings.Join(append(path, n), " -> "))
		case done:
			return nil
		}
		mark[n] = visiting
		for _, dep := range d.RetrieveDependencies {
			if err := visit(dep, append(path, n)); err != nil {
				return err
			}
		}
		mark[n] = done
		out = append(out, d)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}
