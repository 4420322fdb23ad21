// Package doccheck tests that README.md and docs/ say what the code does.
// It has no code of its own.
//
// TestReadmeFiveMinutes follows README.md's five-minute path in a scratch
// module outside the repository, running each command and writing each
// file the page shows. The page marks what the test uses with the fences'
// info strings: "```sh run" blocks hold commands, one per line, run in
// order (the go command only, with $LARIAT the repository's directory),
// and "```go file=<path>" blocks are written to <path> in the module, in
// the order the page shows them.
//
// TestDocsExcerptsAreCode compares each block marked
// "<!-- excerpt: <file> -->" with the file it quotes.
//
// TestEveryExportedNameHasADocComment reads the packages under pkg/ as go
// doc shows them: each has a package comment, and each exported name a
// doc comment.
package doccheck
