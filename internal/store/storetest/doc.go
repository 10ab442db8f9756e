// Package storetest opens real quasim stores for tests: a bbolt file in the
// test's temporary directory, checked for consistency and closed when the
// test ends.
//
// This package has no compatibility promise outside quasim.
package storetest
