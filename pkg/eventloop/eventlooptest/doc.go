// Package eventlooptest has helpers for testing code built on package
// eventloop: a recording Committer that also keeps the state its
// transactions produced, a configurable Event, and a recording Handler.
package eventlooptest
