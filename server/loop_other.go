//go:build !linux

package server

import (
	"net"

	"streamd/config"
	"streamd/server/router"
)

// The event loop is Linux only (loop_linux.go): elsewhere every client gets
// its goroutines.

type eventLoop struct{}

type loopClient struct {
	pl            *pipeline
	handoff, held bool
}

type loopTurn struct{ forwarded int }

func (t *loopTurn) trunkFor(*Server, *Client, string) (*router.TrunkBatch, error) {
	panic("no event loop")
}

func (t *loopTurn) sendForwards() {}

func (t *loopTurn) holdHub(s *Server) *keyspaceHub { panic("no event loop") }

func (t *loopTurn) drain() {}

func (s *Server) loopAccept(net.Conn, *config.Config) *Client { return nil }

func (s *Server) loopStart(*Client) {}
