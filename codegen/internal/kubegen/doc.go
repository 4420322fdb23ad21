// Package kubegen runs the controller-tools deepcopy and CRD generators as
// a library, keeping their output in memory so that the generator can
// check everything before it writes a file, and can read the resource
// names back from the CRDs it will write.
package kubegen
