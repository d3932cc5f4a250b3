package storetest

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/remedy-go/remedy/server"
)

// Waiters counts the requests that found their idempotency key held by another request in
// flight, with the same payload, and so wait for its result. A test that holds an execution
// open lets it finish once Count reaches the number of duplicates it sent: then every duplicate
// waits for the execution, and none arrives late to a completed key (which would be replayed
// without having waited), however slow the machine. Each request claims as an owner of its own,
// so the count is of requests, not of their retries. The zero value is ready to use.
type Waiters struct {
	mu     sync.Mutex
	owners map[string]bool
}

// Watch returns s, counting its waiters in w.
func (w *Waiters) Watch(s server.IdempotencyStore) server.IdempotencyStore {
	return watchedStore{s, w}
}

// Count returns how many requests have found their key in flight so far.
func (w *Waiters) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.owners)
}

type watchedStore struct {
	server.IdempotencyStore
	w *Waiters
}

func (s watchedStore) Claim(ctx context.Context, scope, key string, fingerprint []byte, owner string, lease time.Duration) (server.IdempotencyRecord, bool, error) {
	rec, claimed, err := s.IdempotencyStore.Claim(ctx, scope, key, fingerprint, owner, lease)
	if err == nil && !claimed && !rec.Completed && bytes.Equal(rec.Fingerprint, fingerprint) {
		s.w.mu.Lock()
		if s.w.owners == nil {
			s.w.owners = map[string]bool{}
		}
		s.w.owners[owner] = true
		s.w.mu.Unlock()
	}
	return rec, claimed, err
}
