//go:build wpathprof

package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if a := os.Getenv("STREAMD_PPROF"); a != "" {
		go http.ListenAndServe(a, nil)
	}
}
