package kvscheduler_test

import "testing"

// Reproducers of seeds 100,001-300,000 of TestRandomGraphs (the scheduler's
// failures; random_repro26_model_test.go has the model's). Seeds 200248,
// 230321, 276340 (a derived value left without its base) and 107292,
// 141985, 211294 (a read-back after a failure that did not read the
// base's derived values) need a southbound that holds a derived value
// without its base, which the model's no longer makes: their tests are in
// stray_derived_test.go.

// TestRandomRepro26C_FoundGoneAfterRequestedDelete (seed 110998): a/g1/5,
// lost, is taken down into PENDING by its dependency's delete before its
// own requested delete; that delete fails ("does not exist"), so the
// request is not applied in the transaction, and the read-back that found
// it gone kept the value it held as wanted: the repair created it again,
// although it was requested deleted. A read that finds a value gone keeps
// its request, and that request was a delete.
func TestRandomRepro26C_FoundGoneAfterRequestedDelete(t *testing.T) {
	checkScenario(t, scenario{Txns: []rtxn{
		{Set: []rset{{"a/g1/5", &rval{Ver: 0, Deps: []string{"any:a/g0/"}}}}},
		{Fail: []rfail{{"create", "a/g0/4"}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 0}}}},
		{Set: []rset{{"a/g0/0", &rval{Ver: 0}}}},
		{Lose: []string{"a/g1/5"}, Set: []rset{{"a/g1/5", nil}, {"a/g0/0", nil}}},
	}})
}
