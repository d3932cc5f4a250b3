package server

import (
	"bytes"
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"
)

// MemoryStore is the store an API uses unless told otherwise: confirmation challenges and
// idempotency records in this process's memory, for one instance. It holds at most
// MaxEntries; expired entries are dropped as they are met and from the oldest end, and when it
// is full the oldest entry goes, so size it above the requests of one retention period. It
// starts no goroutine. It is safe for concurrent use.
type MemoryStore struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	entries map[string]*list.Element // of *memEntry
	order   list.List                // oldest first
}

// MemoryOptions configure a MemoryStore.
type MemoryOptions struct {
	MaxEntries int              // default DefaultMemoryEntries
	Now        func() time.Time // the clock expiry is read from (default time.Now)
}

// DefaultMemoryEntries is how many entries a MemoryStore holds unless told otherwise.
const DefaultMemoryEntries = 100_000

type memEntry struct {
	key     string
	expires time.Time
	binding []byte // a challenge's
	rec     IdempotencyRecord
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts MemoryOptions) *MemoryStore {
	m := &MemoryStore{max: opts.MaxEntries, now: opts.Now, entries: map[string]*list.Element{}}
	if m.max <= 0 {
		m.max = DefaultMemoryEntries
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Challenges and records live in one map under distinct prefixes.
const (
	memChallenge = "c\x00"
	memRecord    = "i\x00"
)

// get returns the live entry under key, dropping it when it has expired. m.mu is held.
func (m *MemoryStore) get(key string, now time.Time) *list.Element {
	el, ok := m.entries[key]
	if !ok {
		return nil
	}
	if !now.Before(el.Value.(*memEntry).expires) {
		m.remove(el)
		return nil
	}
	return el
}

func (m *MemoryStore) remove(el *list.Element) {
	delete(m.entries, el.Value.(*memEntry).key)
	m.order.Remove(el)
}

// put stores e as the newest entry, making room for it. m.mu is held.
func (m *MemoryStore) put(e *memEntry, now time.Time) {
	if el, ok := m.entries[e.key]; ok {
		m.remove(el)
	}
	for m.order.Len() > 0 {
		oldest := m.order.Front()
		if m.order.Len() < m.max && now.Before(oldest.Value.(*memEntry).expires) {
			break
		}
		m.remove(oldest)
	}
	m.entries[e.key] = m.order.PushBack(e)
}

// PutChallenge implements ConfirmStore.
func (m *MemoryStore) PutChallenge(ctx context.Context, id string, binding []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.put(&memEntry{key: memChallenge + id, expires: now.Add(ttl), binding: bytes.Clone(binding)}, now)
	return nil
}

// TakeChallenge implements ConfirmStore.
func (m *MemoryStore) TakeChallenge(ctx context.Context, id string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el := m.get(memChallenge+id, m.now())
	if el == nil {
		return nil, false, nil
	}
	m.remove(el)
	return el.Value.(*memEntry).binding, true, nil
}

// Claim implements IdempotencyStore.
func (m *MemoryStore) Claim(ctx context.Context, key string, fingerprint []byte, owner string, lease time.Duration) (IdempotencyRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return IdempotencyRecord{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if el := m.get(memRecord+key, now); el != nil {
		return el.Value.(*memEntry).rec, false, nil
	}
	rec := IdempotencyRecord{Fingerprint: bytes.Clone(fingerprint), Owner: owner}
	m.put(&memEntry{key: memRecord + key, expires: now.Add(lease), rec: rec}, now)
	return rec, true, nil
}

// owned returns the in-flight record under key that owner holds. m.mu is held.
func (m *MemoryStore) owned(key, owner string) (*list.Element, error) {
	el := m.get(memRecord+key, m.now())
	if el == nil {
		return nil, ErrNotOwner
	}
	if rec := el.Value.(*memEntry).rec; rec.Completed || rec.Owner != owner {
		return nil, ErrNotOwner
	}
	return el, nil
}

// Complete implements IdempotencyStore.
func (m *MemoryStore) Complete(ctx context.Context, key, owner string, result StoredResponse, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, err := m.owned(key, owner)
	if err != nil {
		return err
	}
	rec := el.Value.(*memEntry).rec
	rec.Completed = true
	rec.Result = StoredResponse{Status: result.Status, Header: cloneHeader(result.Header), Body: bytes.Clone(result.Body)}
	now := m.now()
	m.put(&memEntry{key: memRecord + key, expires: now.Add(ttl), rec: rec}, now)
	return nil
}

// Release implements IdempotencyStore.
func (m *MemoryStore) Release(ctx context.Context, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, err := m.owned(key, owner)
	if err != nil {
		return err
	}
	m.remove(el)
	return nil
}

// Len is how many entries the store holds, expired ones not yet dropped included.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

func cloneHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	return h.Clone()
}
