package clients

import (
	"strconv"
	"strings"

	"streamd/server/resp"
)

// Error replies of the CLIENT subcommands, with Redis's texts.
const (
	// ErrName is CLIENT SETNAME's (and HELLO SETNAME's) invalid name.
	ErrName = resp.ErrorReply("ERR Client names cannot contain spaces, newlines or special characters.")
	// ErrNoSuchClient is the old-style CLIENT KILL addr's, no client
	// having that address.
	ErrNoSuchClient = resp.ErrorReply("ERR No such client")

	errInvalidID     = resp.ErrorReply("ERR Invalid client ID")
	errKillID        = resp.ErrorReply("ERR client-id should be greater than 0")
	errUnblockReason = resp.ErrorReply("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
)

// ValidAttr reports whether b is a valid client name or attribute value
// (Redis's validateClientAttr): only printable ASCII other than space
// ('!' to '~').
func ValidAttr(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// ValidateName returns ErrName when name is not a valid client name, else
// nil.
func ValidateName(name []byte) resp.Reply {
	if !ValidAttr(name) {
		return ErrName
	}
	return nil
}

// Attr is an attribute CLIENT SETINFO sets.
type Attr int

// The attributes of CLIENT SETINFO.
const (
	LibName Attr = iota // LIB-NAME
	LibVer              // LIB-VER
)

// ParseSetInfo parses CLIENT SETINFO's attribute (case-insensitive) and
// checks its value: the error is nil when both are valid.
func ParseSetInfo(attr, value []byte) (Attr, resp.Reply) {
	var a Attr
	switch strings.ToLower(string(attr)) {
	case "lib-name":
		a = LibName
	case "lib-ver":
		a = LibVer
	default:
		return 0, resp.ErrorReply("ERR Unrecognized option '" + string(attr) + "'")
	}
	if !ValidAttr(value) {
		return 0, resp.ErrorReply("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
	}
	return a, nil
}

// validType reports whether typ (lower case) is a client type Redis knows.
func validType(typ string) bool {
	switch typ {
	case "normal", "master", "replica", "slave", "pubsub":
		return true
	}
	return false
}

// unknownType is the error for a TYPE value validType rejects.
func unknownType(val string) resp.ErrorReply {
	return resp.ErrorReply("ERR Unknown client type '" + val + "'")
}

// ListFilter is CLIENT LIST's selection: TYPE normal|master|replica|pubsub
// or ID id [id ...]. Every streamd client is "normal" (no replicas, no
// pub/sub). The zero value selects every client.
type ListFilter struct {
	// Type is the TYPE option, lower case; "" when absent.
	Type string
	// IDs is the ID option's set; nil when absent.
	IDs map[int64]bool
}

// ParseList parses CLIENT LIST's options (args after LIST). TYPE and ID
// exclude each other (a syntax error), ID takes every remaining argument.
func ParseList(args [][]byte) (ListFilter, resp.Reply) {
	var f ListFilter
	for i := 0; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		switch {
		case opt == "type" && i+1 < len(args) && f.IDs == nil:
			f.Type = strings.ToLower(string(args[i+1]))
			if !validType(f.Type) {
				return ListFilter{}, unknownType(string(args[i+1]))
			}
			i++
		case opt == "id" && i+1 < len(args) && f.Type == "":
			f.IDs = make(map[int64]bool)
			for i++; i < len(args); i++ {
				id, err := strconv.ParseInt(string(args[i]), 10, 64)
				if err != nil || id <= 0 {
					return ListFilter{}, errInvalidID
				}
				f.IDs[id] = true
			}
		default:
			return ListFilter{}, resp.ErrSyntax
		}
	}
	return f, nil
}

// Normal reports whether the filter can select normal clients (no TYPE, or
// TYPE normal): when false, CLIENT LIST is empty.
func (f ListFilter) Normal() bool { return f.Type == "" || f.Type == "normal" }

// Match reports whether CLIENT LIST shows the client. It reads only i's
// ID.
func (f ListFilter) Match(i Info) bool {
	return f.Normal() && (f.IDs == nil || f.IDs[i.ID])
}

// KillFilter is CLIENT KILL's new-style filters, all of which a client
// must pass to be killed. Zero fields are absent filters.
type KillFilter struct {
	ID     int64  // ID: the client's id
	Type   string // TYPE, lower case: only "normal" matches streamd's clients
	Addr   string // ADDR: the remote address
	LAddr  string // LADDR: the local address
	User   string // USER: the ACL user (the caller checks it exists)
	MaxAge int64  // MAXAGE: only clients at least this old, in seconds, when > 0
	// SkipMe (SKIPME yes|no, default yes) spares the calling client;
	// Match does not see it, the caller compares identities.
	SkipMe bool
}

// ParseKill parses CLIENT KILL's filters (the args after KILL, as option
// value pairs, options case-insensitive). Each error is Redis's.
func ParseKill(args [][]byte) (KillFilter, resp.Reply) {
	f := KillFilter{SkipMe: true}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return KillFilter{}, resp.ErrSyntax
		}
		val := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 {
				return KillFilter{}, errKillID
			}
			f.ID = n
		case "type":
			f.Type = strings.ToLower(val)
			if !validType(f.Type) {
				return KillFilter{}, unknownType(val)
			}
		case "addr":
			f.Addr = val
		case "laddr":
			f.LAddr = val
		case "user":
			f.User = val
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				f.SkipMe = true
			case "no":
				f.SkipMe = false
			default:
				return KillFilter{}, resp.ErrSyntax
			}
		case "maxage":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return KillFilter{}, resp.ErrNotInteger
			}
			f.MaxAge = n
		default:
			return KillFilter{}, resp.ErrSyntax
		}
	}
	return f, nil
}

// Match reports whether the client passes every filter but SKIPME. It
// reads only i's ID, Addr, LAddr, User and Age.
func (f KillFilter) Match(i Info) bool {
	switch {
	case f.ID != 0 && i.ID != f.ID,
		f.Type != "" && f.Type != "normal",
		f.Addr != "" && i.Addr != f.Addr,
		f.LAddr != "" && i.LAddr != f.LAddr,
		f.User != "" && f.User != i.User,
		f.MaxAge > 0 && seconds(i.Age) < f.MaxAge:
		return false
	}
	return true
}

// OnOff parses NO-EVICT's and NO-TOUCH's argument, on or off
// (case-insensitive); ok is false for anything else.
func OnOff(arg []byte) (on, ok bool) {
	switch strings.ToLower(string(arg)) {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// ParseUnblock parses CLIENT UNBLOCK's arguments (after UNBLOCK): id
// [TIMEOUT|ERROR]. withError is set by ERROR (the default is TIMEOUT).
func ParseUnblock(args [][]byte) (id int64, withError bool, err resp.Reply) {
	if len(args) == 0 {
		return 0, false, resp.ErrSyntax
	}
	id, perr := strconv.ParseInt(string(args[0]), 10, 64)
	if perr != nil {
		return 0, false, resp.ErrNotInteger
	}
	switch {
	case len(args) == 2:
		switch strings.ToLower(string(args[1])) {
		case "timeout":
		case "error":
			withError = true
		default:
			return 0, false, errUnblockReason
		}
	case len(args) > 2:
		return 0, false, resp.ErrSyntax
	}
	return id, withError, nil
}
