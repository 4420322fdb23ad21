package leader

import (
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// passTable is the controller.PassTracker of an Elector: the objects its
// factories' handlers are handling, each with the passes under way over
// it (one per factory at most) and the resourceVersion each pass's writes
// are conditional on (the copy its handlers were given, then what each of
// its writes returned).
//
// The fence cannot tell which pass a write comes from, so one pass never
// moves another's version: when passes of several factories over one
// object are under way at once, a write of it is conditional on the
// oldest version any of them holds. A pass given a newer copy then sees a
// conflict, and is retried (safe); a slow pass given an older copy never
// has its write land over a change it did not see because another
// factory's pass saw it.
//
// Each pass records the term it began in. A pass that outlived its term
// (a handler past the stop grace period) acts on what it read in a term
// that is over, even when its replica leads again: writes of its object
// are refused from the end of its term on (see stale).
type passTable struct {
	mu      sync.Mutex
	handled map[controller.ObjectRef][]*pass
	// term numbers the term under way (0 between terms); last is the
	// number of the latest term begun.
	term, last uint64
}

// pass is one pass over an object under way.
type pass struct {
	resourceVersion string
	term            uint64 // the term it began in (0: none)
}

// beginTerm numbers a new term: passes begun from now on belong to it.
func (t *passTable) beginTerm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last++
	t.term = t.last
}

// endTerm ends the term under way: passes of it still running are stale.
func (t *passTable) endTerm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.term = 0
}

// Handling records a pass over obj (controller.PassTracker).
func (t *passTable) Handling(obj controller.ObjectRef, resourceVersion string) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.handled == nil {
		t.handled = map[controller.ObjectRef][]*pass{}
	}
	p := &pass{resourceVersion: resourceVersion, term: t.term}
	t.handled[obj] = append(t.handled[obj], p)
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		ps := t.handled[obj]
		for i, q := range ps {
			if q == p {
				ps = append(ps[:i:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(t.handled, obj)
		} else {
			t.handled[obj] = ps
		}
	}
}

// expected returns the resourceVersion writes of obj are conditional on,
// while a pass over it is under way: the oldest any pass holds (the
// earliest started one's when versions are not numbers). stale is true
// when a pass over obj began in a term that has ended: the fence cannot
// tell whose write it is, so it refuses it.
func (t *passTable) expected(obj controller.ObjectRef) (rv string, conditional, stale bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := t.handled[obj]
	if len(ps) == 0 {
		return "", false, false
	}
	rv = ps[0].resourceVersion
	for _, p := range ps {
		if older(p.resourceVersion, rv) {
			rv = p.resourceVersion
		}
		if p.term == 0 || p.term != t.term {
			stale = true
		}
	}
	return rv, true, stale
}

// older reports whether resourceVersion a is older than b, when both are
// numbers (as every etcd-backed API server's are).
func older(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}

// wrote records that a write of obj conditional on precondition returned
// the object at resourceVersion: the next write of the pass that held
// precondition is conditional on that. When several passes held it, none
// is moved: the write may be either's, and a pass whose copy predates it
// must not write over it (its next write conflicts and is retried).
func (t *passTable) wrote(obj controller.ObjectRef, precondition, resourceVersion string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if resourceVersion == "" {
		return
	}
	var holder *pass
	for _, p := range t.handled[obj] {
		if p.resourceVersion != precondition {
			continue
		}
		if holder != nil {
			return
		}
		holder = p
	}
	if holder != nil {
		holder.resourceVersion = resourceVersion
	}
}

// FactoryOptions returns a copy of opts (nil means the zero options) whose
// controllers tell the Elector of every pass of their handlers, so that
// writes through Fence's config of an object being handled are
// conditional on the resourceVersion of the copy the handlers were given
// (see Fence). Build the factory of the work Run runs with it and with
// Fence's config:
//
//	f, err := generic.NewFactoryFromConfig(e.Fence(cfg), nil, e.FactoryOptions(opts))
func (e *Elector) FactoryOptions(opts *generic.FactoryOptions) *generic.FactoryOptions {
	var out generic.FactoryOptions
	if opts != nil {
		out = *opts
	}
	out.Controller.Passes = e.passes
	return &out
}

// PassTracker returns the tracker FactoryOptions sets, for holders built
// on the Elector that set up factory options of their own (package shard).
func (e *Elector) PassTracker() controller.PassTracker { return e.passes }

// target is what a request's URL says of the object it reads or writes:
// its resource and name ("" for a list or a collection), the subresource
// ("" for the object itself), and whether it is a watch.
type target struct {
	obj   controller.ObjectRef
	sub   string
	watch bool
}

// parseTarget reads /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] and
// /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]] after prefix
// (and /api/v1/namespaces/NAME/status or /finalize as the Namespace NAME's),
// the path of the config's Host: client-go puts its URLs under that path
// (a proxy in front of the API server, as Rancher's /k8s/clusters/<id>).
func parseTarget(u *url.URL, prefix string) target {
	t := target{watch: u.Query().Get("watch") == "true" || u.Query().Get("watch") == "1"}
	path := u.Path
	if p := strings.TrimRight(prefix, "/"); p != "" && strings.HasPrefix(path, p+"/") {
		path = path[len(p):]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		t.obj.Group = parts[1]
		parts = parts[3:]
	default:
		return t
	}
	if len(parts) >= 1 && parts[0] == "watch" {
		t.watch = true
		parts = parts[1:]
	}
	// namespaces/NAME/status and namespaces/NAME/finalize are
	// subresources of the Namespace NAME, not collections in it: the API
	// server reads them so (its namespaceSubresources), and so must the
	// fence, or writes of a handled Namespace's status go unconditional.
	if len(parts) >= 3 && parts[0] == "namespaces" && !isNamespaceSubresource(parts[2]) {
		t.obj.Namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) >= 1 {
		t.obj.Resource = parts[0]
	}
	if len(parts) >= 2 {
		t.obj.Name = parts[1]
	}
	if len(parts) >= 3 {
		t.sub = parts[2]
	}
	return t
}

// isNamespaceSubresource reports whether a path segment after
// namespaces/NAME names a subresource of that Namespace.
func isNamespaceSubresource(s string) bool {
	return s == "status" || s == "finalize"
}
