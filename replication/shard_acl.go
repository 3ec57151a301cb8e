package replication

import (
	"streamd/replication/wire"
)

// ACL users live in the keyspace of shard 0 (state/acl.go). The server
// reads them with ACLUsers and is told when they may have changed (an ACL
// command applied, a snapshot restored) through OnACLChange, on every
// replica, so its compiled users follow the log on followers too.

// ACLUsers returns the users the state holds and the shard's ACL version,
// which changes whenever they may have changed.
func (s *Shard) ACLUsers() ([]wire.ACLUser, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.ACLUsers(), s.aclVersion.Load()
}

// ACLVersion returns the number that changes whenever the users may have
// changed (cheap: an atomic load).
func (s *Shard) ACLVersion() uint64 { return s.aclVersion.Load() }

// OnACLChange registers fn, called (on the FSM goroutine, after the apply)
// each time the users may have changed. fn must not block for long.
func (s *Shard) OnACLChange(fn func()) {
	s.aclHookMu.Lock()
	s.aclHooks = append(s.aclHooks, fn)
	s.aclHookMu.Unlock()
}

// aclChanged calls the hooks. The FSM bumps aclVersion itself, under the
// shard's lock and before the apply is published (noteApplied): a reader
// that waited for the entry (WaitApplied, a forwarded ACL write's barrier)
// then finds the version moved and rebuilds, instead of keeping a view
// built before the change while the hooks have not run yet.
func (s *Shard) aclChanged() {
	s.aclHookMu.Lock()
	hooks := s.aclHooks
	s.aclHookMu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}
