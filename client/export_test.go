package client

import (
	"time"

	"github.com/remedy-go/remedy/internal/waits"
)

// SetNow fixes the clock that HTTP-date and epoch headers are measured against when a response
// has no Date header.
func SetNow(t time.Time) { waits.Now = func() time.Time { return t } }
