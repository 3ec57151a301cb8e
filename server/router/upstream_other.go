//go:build !linux

package router

import "net"

// peerClosed reports false: without a portable non-blocking peek an idle
// upstream is trusted until a request on it fails.
func peerClosed(net.Conn) bool { return false }
