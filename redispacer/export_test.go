package redispacer

import "time"

// SetClock sets the clock of p's pause after a failure.
func SetClock(p *Pacer, now func() time.Time) { p.now = now }

// Pause is how long a Pacer leaves Redis alone after a failure.
const Pause = pause
