package remedy

import (
	"errors"

	"github.com/remedy-go/remedy/internal/sent"
)

// What is known of whether a request ran, in the words both sides of the contract use.

// ErrOutcomeUnknown is wrapped by the error of a request that was written and got no answer
// (a reset, a timeout, a lost response): it may have executed, and sending it again could
// execute it twice unless the operation is idempotent or the server honours idempotency keys.
var ErrOutcomeUnknown = errors.New("outcome unknown: the request may have executed")

// NotSent marks err, a transport's failure, as one that happened before the request was
// written (a refused connection, a failed dial or TLS handshake): the server cannot have
// executed it, so the loop retries it like any transient failure even for an operation that
// is not safe to repeat. Without the mark, a transport error counts as one that may have
// executed. A nil err stays nil.
func NotSent(err error) error { return sent.Mark(err) }
