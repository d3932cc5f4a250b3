package mcp

import (
	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/sent"
)

// markNotSent marks err remedy.NotSent when the watch on the tool call's context shows that
// none of its HTTP request was written (see package sent); otherwise err stays as it is. Over
// a session that is not HTTP, nothing is known and nothing is marked.
func markNotSent(w *sent.Watch, err error) error {
	if err != nil && w.NothingWritten() {
		return remedy.NotSent(err)
	}
	return err
}
