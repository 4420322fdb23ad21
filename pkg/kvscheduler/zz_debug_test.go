package kvscheduler_test

import "testing"

func TestZZDebug(t *testing.T) {
	checkScenario(t, scenario{NoUpdate: false, NoDerivedRetrieve: false, Txns: []rtxn{
		{Fail: []rfail{{"create", "d/g0/4/1"}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0, Deps: []string{"d/g0/0/1"}, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0, Derived: []int{1}}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}}},
	}})
}
