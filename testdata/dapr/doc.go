// Package dapr holds the integration tests that run Dapr's real
// pubsub.redis component (github.com/dapr/components-contrib, used as a
// library: no Dapr runtime, no containers) against streamd. It is a module
// of its own (replace streamd => ../..) so that Dapr's large dependency tree
// never enters streamd's go.mod; `make test` runs it after the main module.
package dapr
