//go:build !race

package files

// raceEnabled says the race detector is on (race_test.go).
const raceEnabled = false
