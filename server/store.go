package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
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
// so that a store holds no credentials and no caller can reach another's records. Every
// method also takes the scope of the key: a hash of the principal the entry belongs to, the
// same for all of one principal's entries and never empty. An entry is named by its scope and
// its key together. A store counts each scope's entries against a quota, kept apart for
// challenges and for idempotency records, so that no principal can crowd out another's and
// challenges cannot crowd out records: a store that would have to forget a live entry to take a
// new one refuses the new one with ErrStoreFull (answered 503 unavailable, with Retry-After),
// and only expired entries are ever dropped.

// ConfirmStore keeps confirmation challenges until they are spent or expire.
type ConfirmStore interface {
	// PutChallenge records a challenge: binding (what the token may confirm) under scope and
	// id until ttl has passed. Putting an id that scope holds replaces its challenge. It
	// returns an error that is ErrStoreFull, and stores nothing, when the store or scope's
	// quota of challenges holds as many live ones as it may.
	PutChallenge(ctx context.Context, scope, id string, binding []byte, ttl time.Duration) error
	// TakeChallenge removes the challenge under scope and id and returns its binding; ok is
	// false when there is none (never issued, already taken, or expired). Of concurrent takes
	// of one id, at most one gets ok.
	TakeChallenge(ctx context.Context, scope, id string) (binding []byte, ok bool, err error)
}

// IdempotencyStore keeps, per key, the claim of the request executing it and then its result.
// A claim is a lease: once it has run out the key is free again, so that a key whose request
// died with its instance is not blocked forever. Completing and releasing check the owner, so
// that a request that outlived its lease cannot overwrite the claim of the one that took over.
type IdempotencyStore interface {
	// Claim takes key, in scope, for owner, with the payload's fingerprint, for lease, unless
	// the key holds a record (in flight or completed): then it returns that record and claimed
	// false. Of concurrent claims of one key, at most one gets claimed. The record returned
	// may share memory with the store's: callers read it and do not modify it. It returns an
	// error that is ErrStoreFull, and claims nothing, when the key is free but the store or
	// scope's quota of records holds as many live ones as it may.
	Claim(ctx context.Context, scope, key string, fingerprint []byte, owner string, lease time.Duration) (rec IdempotencyRecord, claimed bool, err error)
	// Complete replaces owner's claim on key with the result, kept for ttl. It returns
	// ErrNotOwner, and changes nothing, when the claim is no longer owner's (its lease ran out
	// and another request took the key, or it was released). A completion takes the place of
	// its claim: it never needs room of its own, so it never fails with ErrStoreFull.
	Complete(ctx context.Context, scope, key, owner string, result StoredResponse, ttl time.Duration) error
	// Release drops owner's claim on key, so that the next request with it executes. It
	// returns ErrNotOwner, and changes nothing, when the claim is not owner's.
	Release(ctx context.Context, scope, key, owner string) error
}

// ErrNotOwner: the claim on an idempotency key belongs to another request, or to none.
var ErrNotOwner = errors.New("server: the idempotency claim is not this request's")

// ErrStoreFull: a store refused a new challenge or claim because it, or the scope's quota,
// holds as many live entries as it may. Stores return it (or an error wrapping it) instead of
// forgetting an entry that has not expired; the request is answered 503 unavailable, with
// Retry-After, and nothing is done.
var ErrStoreFull = errors.New("server: the store holds as many entries as it may")

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

// storeScope is the scope of the exchange's entries in the stores: a hash of its principal,
// so that a store can count them without holding who the principal is.
func (x *exchange) storeScope() string {
	h := sha256.Sum256([]byte("remedy-scope\x00" + string(x.principal)))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}
