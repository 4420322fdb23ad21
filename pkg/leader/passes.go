package leader

import (
	"net/url"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// passTable is the controller.PassTracker of an Elector: the objects its
// factories' handlers are handling, each with the resourceVersion its
// handlers' writes are conditional on (the copy they were given, then
// what each of their writes returned).
type passTable struct {
	mu      sync.Mutex
	handled map[controller.ObjectRef]*pass
}

type pass struct {
	resourceVersion string
	n               int // passes over the object under way (one per factory)
}

// Handling records a pass over obj (controller.PassTracker).
func (t *passTable) Handling(obj controller.ObjectRef, resourceVersion string) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.handled == nil {
		t.handled = map[controller.ObjectRef]*pass{}
	}
	p := t.handled[obj]
	if p == nil {
		p = &pass{}
		t.handled[obj] = p
	}
	p.resourceVersion = resourceVersion
	p.n++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if p.n--; p.n == 0 {
			delete(t.handled, obj)
		}
	}
}

// expected returns the resourceVersion writes of obj are conditional on,
// while a pass over it is under way.
func (t *passTable) expected(obj controller.ObjectRef) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.handled[obj]; p != nil {
		return p.resourceVersion, true
	}
	return "", false
}

// wrote records that a write of obj during its pass returned the object at
// resourceVersion: the pass's next write is conditional on that.
func (t *passTable) wrote(obj controller.ObjectRef, resourceVersion string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.handled[obj]; p != nil && resourceVersion != "" {
		p.resourceVersion = resourceVersion
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
// its resource and name ("" for a list or a collection), and whether it is
// a watch.
type target struct {
	obj   controller.ObjectRef
	watch bool
}

// parseTarget reads /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] and
// /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]] after prefix,
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
	if len(parts) >= 3 && parts[0] == "namespaces" {
		t.obj.Namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) >= 1 {
		t.obj.Resource = parts[0]
	}
	if len(parts) >= 2 {
		t.obj.Name = parts[1]
	}
	return t
}
