package dependents

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Summary is the state of one owner's dependents, as its status shows it.
type Summary struct {
	// Ready lists the objects that are ready ("StatefulSet db").
	Ready []string
	// Pending lists the objects that wait, with what for ("Deployment app:
	// waiting for StatefulSet db to be ready: 0/1 replicas ready"), and
	// those that exist but are not ready yet, with why.
	Pending []string
	// Failed lists the objects whose last operation failed, with the
	// error, and the handler's error.
	Failed []string
	// WaitingForOwners lists, sorted, the other owners ("namespace/name",
	// or "name" for a cluster-scoped kind) that a pending object waits
	// for (RequiresOwner, RequiresOwnerAvailable): what a status field
	// such as the WebApp's waitingFor names.
	WaitingForOwners []string
	// Known is false until the event loop has computed the owner.
	Known bool
	// Generation is the owner's generation the event loop last computed
	// (the summary is of that generation's objects).
	Generation int64
	// UID is the UID of the owner the event loop last computed: an owner
	// deleted and created again under its name is another owner, and a
	// summary of another UID is not of it.
	UID types.UID
}

// AllReady tells whether every object is ready and nothing failed.
func (s Summary) AllReady() bool { return s.Known && len(s.Pending) == 0 && len(s.Failed) == 0 }

// Message is the summary in one line: "ready: ...; pending: ...; failed: ...".
func (s Summary) Message() string {
	if !s.Known {
		return "not computed yet"
	}
	var parts []string
	add := func(what string, l []string) {
		if len(l) > 0 {
			parts = append(parts, what+": "+strings.Join(l, ", "))
		}
	}
	add("failed", s.Failed)
	add("pending", s.Pending)
	add("ready", s.Ready)
	if len(parts) == 0 {
		return "no objects"
	}
	return strings.Join(parts, "; ")
}

// summarize reads the owner's report and the scheduler's states.
func (d *Dependents) summarize(ownerKey string) Summary {
	rep, ok := d.reports.get(ownerKey)
	if !ok {
		return Summary{}
	}
	s := Summary{Known: true, Generation: rep.generation, UID: rep.uid}
	cycles := objectCycles{}
	if rep.err != nil {
		s.Failed = append(s.Failed, "handler: "+rep.err.Error())
	}
	if rep.recordErr != nil {
		s.Failed = append(s.Failed, rep.recordErr.Error())
	}
	for _, o := range rep.objects {
		st := d.sched.GetValueStatus(o.key)
		switch {
		case o.contested != "":
			s.Failed = append(s.Failed, fmt.Sprintf("%s: %s", o.label, o.contested))
		case st.State == kvscheduler.Failed || st.State == kvscheduler.Retrying || st.State == kvscheduler.Invalid:
			s.Failed = append(s.Failed, fmt.Sprintf("%s: %s", o.label, d.failure(st.Error)))
		case o.cycle != "" && !o.ready && st.State != kvscheduler.Configured:
			s.Failed = append(s.Failed, fmt.Sprintf("%s: waits for itself, it can never be created: a dependency cycle %s", o.label, o.cycle))
		case st.State == kvscheduler.Pending && cycles.of(d, ownerKey, d.ownersIn(st.UnmetDependencies)) != "":
			s.Failed = append(s.Failed, fmt.Sprintf("%s: waits for itself, it can never be created: a dependency cycle between owners %s",
				o.label, cycles.of(d, ownerKey, d.ownersIn(st.UnmetDependencies))))
			s.WaitingForOwners = append(s.WaitingForOwners, d.ownersIn(st.UnmetDependencies)...)
		case st.State == kvscheduler.Pending:
			s.Pending = append(s.Pending, o.label+": waiting for "+d.waitingFor(ownerKey, st.UnmetDependencies))
			s.WaitingForOwners = append(s.WaitingForOwners, d.ownersIn(st.UnmetDependencies)...)
		case o.ready:
			s.Ready = append(s.Ready, o.label)
		default:
			s.Pending = append(s.Pending, o.label+": not ready: "+o.why)
		}
	}
	s.Failed = append(s.Failed, d.failedLeaving(ownerKey, rep.leaving)...)
	slices.Sort(s.WaitingForOwners)
	s.WaitingForOwners = slices.Compact(s.WaitingForOwners)
	d.logCycle(ownerKey, cycles.first) // "" (none, or not looked for): logged again if it comes back
	return s
}

// objectCycles keeps, for one summary, the cycles of owners found from
// each set of owners an object waits for (see ownercycle.go): a cycle is
// judged per object, from the owners that object itself waits for, not
// once per owner, and looked for once per set.
type objectCycles struct {
	found map[string]string // sorted owners waited for, joined -> cycle ("" when none)
	first string            // the first cycle found, the one logged
}

// of returns the cycle of owners from the owner at key, through one of
// waited (the owners an object of it waits for), back to it, or "".
func (c *objectCycles) of(d *Dependents, key string, waited []string) string {
	if len(waited) == 0 {
		return ""
	}
	waited = slices.Compact(slices.Sorted(slices.Values(waited)))
	id := strings.Join(waited, "\x00")
	cycle, ok := c.found[id]
	if !ok {
		cycle = d.ownerCycleVia(key, waited)
		if c.found == nil {
			c.found = map[string]string{}
		}
		c.found[id] = cycle
		if c.first == "" {
			c.first = cycle
		}
	}
	return cycle
}

// ownersIn returns the owners whose markers (ready or available) are
// among unmet.
func (d *Dependents) ownersIn(unmet []string) []string {
	var out []string
	for _, key := range unmet {
		if owner, ok := d.k.ownerOf(key); ok {
			out = append(out, owner)
		} else if owner, ok := d.k.availableOf(key); ok {
			out = append(out, owner)
		}
	}
	return out
}

// waitingFor says what the unmet dependencies (markers) of an object of
// the owner at ownerKey stand for.
func (d *Dependents) waitingFor(ownerKey string, unmet []string) string {
	var out []string
	for _, key := range unmet {
		if slices.Contains(unmet, d.k.ready(ownerKey, key)) {
			// An object key an object is also ordered after (see
			// builder.go): its marker's unmet says it better.
			continue
		}
		if owner, objKey, ok := d.k.readyOf(key); ok {
			if o, ok := d.reports.stateOf(owner, objKey); ok {
				why := ""
				if o.why != "" && !o.ready {
					why = ": " + o.why
				}
				out = append(out, o.label+" to be ready"+why)
				continue
			}
			out = append(out, objKey+" to be ready")
			continue
		}
		if owner, ok := d.k.ownerOf(key); ok {
			out = append(out, d.ownerKind+" "+owner+" to be ready")
			continue
		}
		if owner, ok := d.k.availableOf(key); ok {
			out = append(out, d.ownerKind+" "+owner+" to be available")
			continue
		}
		out = append(out, key)
	}
	return strings.Join(out, ", ")
}

// splitOwnerKey splits "namespace/name" (or "name").
func splitOwnerKey(key string) (namespace, name string) {
	if ns, n, ok := strings.Cut(key, "/"); ok {
		return ns, n
	}
	return "", key
}

// failure says why a value failed, in the registration's terms: the
// descriptor's refusal of an object it did not create names its own
// option (Adopt), which a registration has not.
func (d *Dependents) failure(err error) string {
	var nm *kubedescriptor.NotManagedError
	if !errors.As(err, &nm) {
		return fmt.Sprint(err)
	}
	by := "no " + kubedescriptor.LabelManagedBy + " label"
	if nm.ManagedBy != "" {
		by = kubedescriptor.LabelManagedBy + "=" + nm.ManagedBy
	}
	return fmt.Sprintf("it exists and was not created by %s (it carries %s); it is never taken over: "+
		"delete it, or label it %s=%s to hand it over", nm.FieldManager, by, kubedescriptor.LabelManagedBy, nm.FieldManager)
}
