package store

// The tests of this package (store and store_test) skip fsync: they check
// logic, not durability. BenchmarkCheckpoint measures both.
func init() { testNoSync = true }
