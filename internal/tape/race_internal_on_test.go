//go:build race

package tape

// raceBuild reports a build with the race detector, under which sync.Pool drops items on
// purpose (see raceEnabled in the external tests).
const raceBuild = true
