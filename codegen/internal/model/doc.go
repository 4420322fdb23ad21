// Package model turns loaded API packages into the groups, versions and
// kinds the generator writes code for, and rejects input it cannot generate
// correct code for, with errors that name the file and line at fault.
//
// It reads markers and syntax only. Type checking is left to the
// controller-tools generators, because before the first run the API
// packages do not compile yet: their deepcopy methods are missing.
package model
