//go:build race

package files

// raceEnabled says the race detector is on: it allocates in code that
// otherwise does not, so allocation counts are not checked.
const raceEnabled = true
