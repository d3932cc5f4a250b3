package remedy

import (
	"time"

	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/internal/waits"
)

// SetNow fixes the clock that HTTP-date and epoch headers are measured against when a response
// has no Date header.
func SetNow(t time.Time) { waits.Now = func() time.Time { return t } }

// ToPointer exposes the path normalizer to the table tests.
var ToPointer = toPointer

// ValidJSON exposes the strict validator to its tests.
var ValidJSON = tape.Valid
