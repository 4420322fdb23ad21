package leader

import (
	"fmt"
	"net/http"
)

// UnjudgedCreateError is the error of a write that may create an object
// of a kind the API server never runs admission policies on (see
// isUnjudged): Fence refuses it in every term rather than send it.
type UnjudgedCreateError struct {
	// Method and URL name the refused request.
	Method, URL string
	// Resource is the kind's resource, as "resource.group".
	Resource string
}

// Error says which request was refused, and why.
func (e *UnjudgedCreateError) Error() string {
	return fmt.Sprintf("leader: %s %s refused: the API server never runs admission policies on %s, so the term fence cannot judge "+
		"its create, and one that stalled in the network would land after the term; create it through a config that is not fenced",
		e.Method, e.URL, e.Resource)
}

// kube-apiserver's admission-policy plugins return before judging a
// request for the policy kinds themselves (the policies and their
// bindings, validating and mutating, of admissionregistration.k8s.io), so
// that no policy can lock itself or its removal in; webhook
// configurations are judged. The term stamp of such a create is never
// checked: sent in a term, it lands whenever the connection delivers it,
// after the term too. The fence's own view of its term cannot close that:
// it is checked before sending already, and a request held in the
// network lands later whatever the sender knew. Nothing else the API
// server checks on a create can carry the term either (a create has no
// precondition but "does not exist yet"). So the fence refuses a write
// that may create such an object (a POST to the collection, a PUT or an
// apply it would stamp), in every term, with an *UnjudgedCreateError
// naming the kind: an operator that must create them does so through a
// config that is not fenced, knowingly (as InstallTermPolicy is run),
// never unfenced without knowing. Updates of them, which never create,
// go as other updates do.

// isUnjudged reports whether t is a resource of a kind whose creates the
// API server never runs admission policies on.
func isUnjudged(t target) bool {
	if t.obj.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch t.obj.Resource {
	case "validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}

// refuseUnjudged closes req's body and returns the *UnjudgedCreateError
// of the write req of t.
func refuseUnjudged(req *http.Request, t target) error {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &UnjudgedCreateError{Method: req.Method, URL: req.URL.String(), Resource: t.obj.Resource + "." + t.obj.Group}
}
