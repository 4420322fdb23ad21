// Package readme tests that README.md's five-minute path works as written:
// its test follows the page in a scratch module outside the repository,
// running each command and writing each file the page shows. It has no
// code of its own.
//
// The page marks what the test uses with the fences' info strings:
// "```sh run" blocks hold commands, one per line, run in order (the go
// command only, with $LARIAT the repository's directory), and
// "```go file=<path>" blocks are written to <path> in the module, in the
// order the page shows them.
package doccheck
