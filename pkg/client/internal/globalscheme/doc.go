// Package globalscheme holds tests of pkg/client that register a custom kind
// into client-go's global scheme.Scheme, as sample-controller-style programs
// do for their event recorders. They live in a test binary of their own so
// that registration cannot change what other packages' tests see: pkg/client's
// own tests rely on the global scheme knowing only the built-in kinds.
package globalscheme
