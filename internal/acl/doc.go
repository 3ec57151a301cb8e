// Package acl is the pure ACL engine of Redis 7.2's ACL users: rules
// (ACL SETUSER's modifiers, selectors included), their description (ACL
// LIST, ACL GETUSER, ACL SAVE), permission checks (command dispatch and ACL
// DRYRUN), the aclfile's parser, ACL LOG's grouping and ACL GENPASS. It reads
// no clock and no randomness (times and random bytes are passed in) and
// imports only internal/glob, for Redis's key pattern matching.
//
// A server builds one Catalog from its command table (commands and
// subcommands with their ACL categories), holds the current *Users and
// replaces it on every change: SetUser/DelUser go to a Clone, which is then
// published, so a published Users and its *User values are read-only and
// safe to share between connections. Per command it calls User.Check with
// the command's keys (KeyRef, in argument order, read/write from the key
// specs); a Denial gives the NOPERM reply, the ACL DRYRUN text and the ACL
// LOG entry's reason and object. User.Rules gives rules that rebuild a
// user exactly (for replication and snapshots).
//
// Texts follow Redis 7.2: command rules are shown as given (minus the ones
// later rules supersede) after +@all or -@all, new users carry
// sanitize-payload, NOPERM and DRYRUN name the user, ACL LOG entries have
// entry-id and timestamps. The differential tests compare everything with
// the installed redis-server; against a 7.0 server (which renders command
// rules from its bitmap) command rules are compared by effect.
package acl
