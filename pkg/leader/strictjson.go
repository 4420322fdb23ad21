package leader

import (
	"fmt"

	kjson "sigs.k8s.io/json"
)

// The fence reads JSON bodies into maps, where the last of two equal keys
// wins, and encodes back what it changed. The API server reads a built-in
// kind into its typed struct, where a second "labels" adds to the map the
// first one filled and a second "metadata" adds to the first one's
// fields: what the fence would encode back is not what the API server
// would have read (a label lost, a resourceVersion precondition dropped).
// Rather than imitate each decoder's merge, the fence refuses a body it
// must read whose JSON writes a key twice at any depth, as the API
// server's strict field validation would (sigs.k8s.io/json's
// DisallowDuplicateFields, which apimachinery uses): it fails unsent
// (ErrUnstampable). Clients that encode objects (client-go, kubectl)
// never write a key twice; only hand-built bodies do.

// duplicateKey returns an error naming a key the JSON body writes twice
// in one object, nil when it writes none or is not JSON (a body that is
// not JSON is refused, or read as YAML, by its reader).
func duplicateKey(body []byte) error {
	var v any
	strict, _ := kjson.UnmarshalStrict(body, &v, kjson.DisallowDuplicateFields)
	if len(strict) > 0 {
		return fmt.Errorf("its JSON writes a key twice (%v), which the fence and the API server would read differently", strict[0])
	}
	return nil
}
