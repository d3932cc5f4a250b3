package server

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The stores behind confirmation and idempotency. An API keeps them in memory by default
// (NewMemoryStore); several instances of one API share them in Redis (package redisstore), so
// that a token issued by one instance is spent on another, and a key claimed on one is replayed
// by all. Every method takes a context and returns an error: a store that cannot answer fails
// the request (503 unavailable), it never lets it run unguarded.
//
// Keys reach the stores already scoped and hashed (principal, operation and the caller's key),
// so that a store holds no credentials and no caller can reach another's records.

// ConfirmStore keeps confirmation challenges until they are spent or expire.
type ConfirmStore interface {
	// PutChallenge records a challenge: binding (what the token may confirm) under id until
	// ttl has passed.
	PutChallenge(ctx context.Context, id string, binding []byte, ttl time.Duration) error
	// TakeChallenge removes the challenge under id and returns its binding; ok is false when
	// there is none (never issued, already taken, or expired). Of concurrent takes of one id, at
	// most one gets ok.
	TakeChallenge(ctx context.Context, id string) (binding []byte, ok bool, err error)
}

// IdempotencyStore keeps, per key, the claim of the request executing it and then its result.
// A claim is a lease: once it has run out the key is free again, so that a key whose request
// died with its instance is not blocked forever. Completing and releasing check the owner, so
// that a request that outlived its lease cannot overwrite the claim of the one that took over.
type IdempotencyStore interface {
	// Claim takes key for owner, with the payload's fingerprint, for lease, unless the key
	// holds a record (in flight or completed): then it returns that record and claimed false.
	// Of concurrent claims of one key, at most one gets claimed. The record returned may share
	// memory with the store's: callers read it and do not modify it.
	Claim(ctx context.Context, key string, fingerprint []byte, owner string, lease time.Duration) (rec IdempotencyRecord, claimed bool, err error)
	// Complete replaces owner's claim on key with the result, kept for ttl. It returns
	// ErrNotOwner, and changes nothing, when the claim is no longer owner's (its lease ran out
	// and another request took the key, or it was released).
	Complete(ctx context.Context, key, owner string, result StoredResponse, ttl time.Duration) error
	// Release drops owner's claim on key, so that the next request with it executes. It
	// returns ErrNotOwner, and changes nothing, when the claim is not owner's.
	Release(ctx context.Context, key, owner string) error
}

// ErrNotOwner: the claim on an idempotency key belongs to another request, or to none.
var ErrNotOwner = errors.New("server: the idempotency claim is not this request's")

// IdempotencyRecord is what an IdempotencyStore holds under a key.
type IdempotencyRecord struct {
	Fingerprint []byte // of the payload that claimed the key
	Owner       string // the claiming request
	Completed   bool   // Result holds the response; otherwise the request is in flight
	Result      StoredResponse
}

// StoredResponse is a completed request's response, replayed to its retries.
type StoredResponse struct {
	Status int
	Header http.Header // the replayed headers only (see replayedHeaders)
	Body   []byte
}
