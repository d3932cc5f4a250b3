package remedy

import (
	"context"
	"encoding/json"
)

// Rewriter repairs a call's arguments from the envelope that refused them. It returns the new
// arguments (a JSON object), or nil to give up: the loop then stops with ErrRewriteGaveUp.
// An error also gives up, and is kept in the call's error.
type Rewriter interface {
	Rewrite(ctx context.Context, r *Rewrite) (json.RawMessage, error)
}

// Rewrite is what a Rewriter is asked to repair. It is a struct so that fields can be added.
type Rewrite struct {
	Operation string          // the operation the arguments are for
	Args      json.RawMessage // the arguments as sent, a JSON object
	Envelope  *Envelope       // the failure that names what to change
	Attempt   int             // the attempt that failed, from 1
}

// RewriterFunc adapts a function to a Rewriter.
type RewriterFunc func(ctx context.Context, r *Rewrite) (json.RawMessage, error)

// Rewrite calls f.
func (f RewriterFunc) Rewrite(ctx context.Context, r *Rewrite) (json.RawMessage, error) {
	return f(ctx, r)
}

// Chain tries each rewriter in turn and returns the first repair; an error stops the chain.
func Chain(rs ...Rewriter) Rewriter {
	return RewriterFunc(func(ctx context.Context, r *Rewrite) (json.RawMessage, error) {
		for _, rw := range rs {
			if rw == nil {
				continue
			}
			out, err := rw.Rewrite(ctx, r)
			if err != nil || out != nil {
				return out, err
			}
		}
		return nil, nil
	})
}
