package condition_test

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
)

// A status handler records the outcome of its work in a condition. Setting
// the same outcome again changes nothing, so the status is not rewritten and
// the object does not go round the handlers once more.
func ExampleCond() {
	const ready = condition.Cond("Ready")
	var conds []metav1.Condition // in an operator: &obj.Status.Conditions

	changed := ready.SetError(&conds, 3, "Deploying", errors.New("image not found"))
	fmt.Println(changed, ready.IsFalse(conds), ready.Reason(conds), ready.Message(conds))

	changed = ready.SetError(&conds, 3, "Deploying", errors.New("image not found"))
	fmt.Println(changed)

	ready.SetError(&conds, 4, "Deploying", nil)
	fmt.Println(ready.IsTrue(conds), ready.Reason(conds), ready.Get(conds).ObservedGeneration)
	// Output:
	// true true Deploying image not found
	// false
	// true Succeeded 4
}
