//go:build !linux

package main

import (
	"log"
	"os"
)

// datasync is fsync where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }

// serveLoop needs epoll: -loop is Linux only.
func serveLoop(port int, f *os.File, withHops bool) { log.Fatal("-loop needs Linux (epoll)") }
