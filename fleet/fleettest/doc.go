// Package fleettest runs a real NATS JetStream cluster of embedded servers
// on loopback, for the fleet's tests.
//
// This package has no compatibility promise outside quasim.
package fleettest
