// Package model turns loaded API packages into the groups, versions and
// kinds the generator writes code for, and rejects input it cannot generate
// correct code for, with errors that name the file and line at fault.
//
// It reads markers and syntax, and the types of status fields with
// go/types, so that a condition type is known by its identity rather than
// its name. Type errors are not reported: before the first run the API
// packages do not compile yet (their deepcopy methods are missing), and the
// types of fields resolve all the same; the controller-tools generators
// report the rest.
package model
