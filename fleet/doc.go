// Package fleet shares certified configs between quasimd nodes through
// NATS JetStream: a node publishes what it promotes, learns what the
// others promoted, and serves only what a key it trusts certified.
//
// This package has no compatibility promise outside quasim.
//
// # Storage
//
// A fleet is a name (CheckName) and a set of NATS servers. Each fleet has
//
//   - a KV bucket, "quasim-fleet-NAME" (Bucket), holding the offers,
//     revocations and failure reports below, with 8 revisions per key;
//   - a stream, "QUASIM_FLEET_NAME_TRIALS" (Stream), of anonymised trial
//     summaries on subjects "quasim.fleet.NAME.trials.DEV" (Subject), kept
//     30 days and at most 1 GiB.
//
// The first node to join creates both with the replica count it was given;
// later nodes bind to them as they are. The first node also stores a random
// 32-byte salt at "meta.salt"; it is never replaced.
//
// # Keys and records
//
// Names that KV keys cannot hold as written (device classes, problems,
// kernels) appear as the first 32 hex digits of their SHA-256 (DEV, SPEC,
// KERNEL, PROBLEM below). Every record is JSON with "v": 1 (Version),
// decoded strictly: unknown fields, trailing data and records over 1 MiB
// are malformed.
//
//   - "cert.DEV.SPEC.KERNEL.PROBLEM.ISSUER" (CertKey) holds an Offer: the
//     certificate exactly as its issuer signed it (package certs), the
//     publishing node's id and when it was published. ISSUER is the hex of
//     the issuer's key id, so nodes that certified the same job do not
//     overwrite each other; the latest offer of one issuer replaces its
//     earlier one. Device class first: a watch can filter on a class.
//   - "revoke.CERTID" (RevokeKey) holds a Revocation, signed by the
//     certificate's issuer. A revocation by any other key has no effect.
//   - "fail.CERTID.NODE" (FailKey) holds a Failure: node NODE verified the
//     certified config locally and it failed there; signed by that node's
//     key. A report takes nothing out of service elsewhere by itself:
//     a node told of one (Config.OnFailure) verifies the config again and
//     revokes only when its own check fails, or when enough distinct
//     reporters (by key id: a node id is the reporter's word) agree; the
//     daemon's part.
//   - "agg.DEV.KERNEL.NODE" (AggKey) holds a node's Contribution to the
//     federated aggregate of a kernel on a device class, signed by its key:
//     for each config it measured ok, the rank quantile of its time among
//     the configs it measured at a problem (0 fastest, 1 slowest; ties
//     share their mean rank), averaged over its problems (Contribute).
//     Anyone combines the trusted contributions (Combine): each config's
//     quantile averaged over the nodes that measured it, with their count.
//     No node needs another's trials to use it; a node's warm start ranks
//     by it as by a related job.
//
// Revocations, failures and contributions are signed over a length-prefixed list of their
// fields (see signedBody), with the node's Ed25519 issuer key.
//
// # Trust
//
// A node trusts its own key and the keys its operator lists (LoadTrustDir
// reads the "ed25519:BASE64" lines of DefaultTrustDir/*.pub). An offer is
// served only when its certificate verifies with a trusted key (the
// issuer's signature, id and canonical bytes: certs.VerifyBytes), records
// that it passed its checks, and is stored at the key of its own job and
// issuer. Anything else is left out (View.Apply) and counted by why
// (Rejections): it neither adds nor removes an offer. Of a job's live
// offers, the one with the lowest certified median latency is the best
// (View.Best). The node still verifies a fleet config locally before it
// certifies it as its own; that is the daemon's part.
//
// # Node ids and privacy
//
// A node appears in the fleet only as its id: the first 32 hex digits of
// SHA-256(salt || SHA-256("quasim fleet node id\x00" || issuer key seed)).
// Only the node can compute it; nodes in two fleets (two salts) cannot be
// linked by id. Records carry no host name, user name, path or address:
// offers hold certificates, whose job details name the device class, CPU
// model, OS, architecture and Go version; summaries hold a config key, its
// status, median time and energy. What an observer of the bucket and the
// stream learns: which device classes, kernels and problems the fleet
// tunes, which configs won and how fast they ran, every config each node
// measured with its median time (summaries) and its rank (contributions),
// the issuers' key ids, and how many nodes publish (distinct ids). What it
// cannot learn from them: which machine, user or site a node is, its
// repetitions, error messages, paths or addresses, or which ids in two
// fleets are the same node. Contributions alone give ranks, not times, and
// not at which problem. The servers see the nodes' IP addresses, as any
// TCP server does; nothing stored does.
//
// # Connection
//
// Client.Run connects (retrying while no server answers; credentials,
// nkeys and TLS as nats.go supports them), creates or binds the bucket and
// stream, and watches the bucket. Each request to the servers is bounded
// by its own short timeout and retried: a request made before the cluster
// has a JetStream meta leader otherwise waits for its whole context. A KV
// watch first replays the current value of every key and then sends a nil
// entry (Client.Ready closes on it), then updates. When the connection
// comes back, or the watch falls behind the bucket without progress (its
// consumer was on a server that died), the watch starts again from the
// last revision it applied.
//
// Publishing never blocks the caller: records wait in an outbox (the
// latest per key) while the fleet is out of reach, and each KV put writes
// one whole record or nothing, so a node that dies mid-publish leaves no
// partial record.
package fleet
