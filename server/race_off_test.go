//go:build !race

package server

// raceEnabled is set when the race detector is on (tests then use less data).
const raceEnabled = false
