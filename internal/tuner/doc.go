// Package tuner runs one tuning cycle of a job: it resumes the job's search
// policy from the store, asks the strategy for configs, measures them under
// the device lock, checkpoints trials, policy and cycle record to the store
// after every generation, and promotes the best valid trial to served.
//
// This package has no compatibility promise outside quasim.
package tuner
