// Package queue compares lariat's workqueue with the queues a controller
// could use instead, on the dispatch workload that dominates a controller's
// start: a flood of distinct keys from the informer's initial list, handed
// to a few workers. It lives in its own module so that controller-runtime
// and lasso never become dependencies of lariat itself.
//
// Run from scripts/bench:
//
//	go test -run '^$' -bench . -benchmem -benchtime 3x -count 3 ./queue/
//
// One op dispatches all keys, so ns/op compare directly across queues.
package queue
