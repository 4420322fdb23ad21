package genericcondition_test

import (
	"errors"
	"fmt"

	"github.com/lariat-dev/lariat/pkg/genericcondition"
)

// A wrangler status handler ported to Lariat keeps its
// []genericcondition.GenericCondition (only the import path changes) and
// calls the helpers on the list instead of on the object.
func ExampleShape() {
	conds := genericcondition.Shape()
	var status struct {
		Conditions []genericcondition.GenericCondition `json:"conditions,omitempty"`
	}
	const generation = 1

	conds.CreateUnknownIfNotExists(&status.Conditions, "Ready", generation)
	fmt.Println(status.Conditions[0].Status)

	err := conds.Do(&status.Conditions, "Ready", generation, "Deploying", func() error {
		return errors.New("image not found")
	})
	c := conds.Find(status.Conditions, "Ready")
	fmt.Println(err, c.Status, c.Reason, c.Message)

	ran := false
	conds.Do(&status.Conditions, "Imported", generation, "", func() error { return nil })
	conds.DoUntilTrue(&status.Conditions, "Imported", generation+1, "", func() error { ran = true; return nil })
	fmt.Println(ran, conds.IsTrue(status.Conditions, "Imported"))
	// Output:
	// Unknown
	// image not found False Deploying image not found
	// false true
}
