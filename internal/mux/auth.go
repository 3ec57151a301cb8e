package mux

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Auth is how the nodes of a cluster prove to each other that they belong
// to it, on every connection to the raft port and in both directions. The
// zero value is a cluster without credentials (loopback only: cmd/streamd
// refuses a non-loopback raft address without any).
type Auth struct {
	// Secret is cluster-secret: both sides prove they know it by a
	// challenge–response (HMAC-SHA256 over fresh nonces from both sides);
	// it never crosses the wire.
	Secret string
	// Password is requirepass as configured at start-up. It keys the
	// same challenge–response (under another label) when neither Secret
	// nor TLS is set; a later CONFIG SET requirepass does not change it.
	Password string
	// ServerTLS and ClientTLS are tls-cluster's configurations: the
	// listener's (requiring a client certificate that chains to the CA)
	// and the dialer's (presenting this node's certificate, verifying the
	// acceptor's chain). Both or neither; with a Secret too, the
	// challenge–response runs inside TLS.
	ServerTLS, ClientTLS *tls.Config
	// HandshakeTimeout bounds a connection's whole handshake, TLS
	// included (0 = DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// MaxPending caps the accepted connections still in their handshake
	// (0 = DefaultMaxPending); beyond it a new connection is closed at
	// once.
	MaxPending int
}

// Defaults for Auth's limits.
const (
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultMaxPending       = 64
)

// Mode is what a node proves its membership with; both ends of a
// connection must use the same. It travels in the handshake's first
// messages so that a mismatch is reported as such.
type Mode byte

// Modes. ModeTLS is a flag combined with the others.
const (
	// ModeNone: no credentials (the handshake still runs).
	ModeNone Mode = 0
	// ModeSecret: cluster-secret.
	ModeSecret Mode = 1
	// ModePassword: requirepass, when neither cluster-secret nor
	// tls-cluster is set.
	ModePassword Mode = 2
	// ModeTLS: tls-cluster (with ModeSecret when both are set).
	ModeTLS Mode = 0x80
)

// String names the mode as the directives that choose it.
func (m Mode) String() string {
	var s string
	switch m &^ ModeTLS {
	case ModeNone:
		s = "none"
		if m&ModeTLS != 0 {
			return "tls-cluster"
		}
	case ModeSecret:
		s = "cluster-secret"
	case ModePassword:
		s = "requirepass"
	default:
		s = fmt.Sprintf("unknown(%d)", byte(m))
	}
	if m&ModeTLS != 0 {
		s = "tls-cluster+" + s
	}
	return s
}

// Key-derivation labels: the HMAC key K is HMAC-SHA256(label, credential),
// so the same text used as requirepass and as cluster-secret gives two
// unrelated keys, and neither is the credential itself.
const (
	labelSecret   = "streamd cluster-secret key v1"
	labelPassword = "streamd requirepass cluster key v1"
	labelNone     = "streamd no cluster credentials v1"
)

// Transcript labels: the acceptor's and the dialer's proofs are MACs under
// different labels, so neither can stand in for the other.
const (
	labelAcceptor = "streamd-acceptor"
	labelDialer   = "streamd-dialer"
)

// keys is an Auth made ready for handshakes.
type keys struct {
	mode       Mode
	key        []byte
	serverTLS  *tls.Config
	clientTLS  *tls.Config
	timeout    time.Duration
	maxPending int
}

// newKeys derives the handshake key and mode from a.
func newKeys(a Auth) *keys {
	k := &keys{serverTLS: a.ServerTLS, clientTLS: a.ClientTLS, timeout: a.HandshakeTimeout, maxPending: a.MaxPending}
	if k.timeout <= 0 {
		k.timeout = handshakeTimeout
	}
	if k.maxPending <= 0 {
		k.maxPending = DefaultMaxPending
	}
	tlsOn := a.ServerTLS != nil || a.ClientTLS != nil
	switch {
	case a.Secret != "":
		k.mode, k.key = ModeSecret, derive(labelSecret, a.Secret)
	case tlsOn:
		k.mode, k.key = ModeNone, derive(labelNone, "")
	case a.Password != "":
		k.mode, k.key = ModePassword, derive(labelPassword, a.Password)
	default:
		k.mode, k.key = ModeNone, derive(labelNone, "")
	}
	if tlsOn {
		k.mode |= ModeTLS
	}
	return k
}

// derive is HMAC-SHA256 keyed by label over the credential.
func derive(label, credential string) []byte {
	h := hmac.New(sha256.New, []byte(label))
	h.Write([]byte(credential))
	return h.Sum(nil)
}

// mac is HMAC-SHA256 under k over label and parts, in order.
func (k *keys) mac(label string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, k.key)
	h.Write([]byte(label))
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// rateLog is a set of WARNs each logged at most once per interval (per
// message: a flood of one kind of refusal does not hide another); what it
// held back in between is counted on the next line ("suppressed").
type rateLog struct {
	mu   sync.Mutex
	msgs map[string]*rateState
}

// rateState is one message's last line and what was held back since.
type rateState struct {
	last       time.Time
	suppressed int
}

// rateLogEvery is the interval of the raft port's rate-limited warnings.
var rateLogEvery = time.Second

// warn logs msg with args unless the same msg went out less than
// rateLogEvery ago. Messages are the package's constants, so the map stays
// small.
func (r *rateLog) warn(log *slog.Logger, msg string, args ...any) {
	r.mu.Lock()
	if r.msgs == nil {
		r.msgs = map[string]*rateState{}
	}
	st := r.msgs[msg]
	if st == nil {
		st = &rateState{}
		r.msgs[msg] = st
	}
	now := time.Now()
	if !st.last.IsZero() && now.Sub(st.last) < rateLogEvery {
		st.suppressed++
		r.mu.Unlock()
		return
	}
	st.last = now
	n := st.suppressed
	st.suppressed = 0
	r.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	log.Warn(msg, args...)
}
