package server

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// MemoryStore is the store an API uses unless told otherwise: confirmation challenges,
// idempotency records and the jobs of background operations in this process's memory, for one
// instance (it implements ConfirmStore, IdempotencyStore and JobStore). It starts no goroutine. It is
// safe for concurrent use.
//
// Challenges and records are kept in two spaces, each bounded as a whole (MaxChallenges,
// MaxRecords) and per scope, that is per principal (ScopeChallenges, ScopeRecords). Expired
// entries are dropped, as they are met and, soonest to expire first, before a new entry is
// counted. A live entry is never dropped to make room: a challenge or claim that finds its
// space, or its scope's quota, full of live entries is refused with ErrStoreFull, so that no
// caller's flood of challenges or keys makes the store forget another's, or its own, in-flight
// or completed request. Size the spaces above what one retention period brings (a challenge
// lasts its TTL; a record its lease, then its retention).
type MemoryStore struct {
	mu         sync.Mutex
	now        func() time.Time
	challenges memSpace
	records    memSpace
	jobs       memSpace // background operations (JobStore), a space of their own
}

// MemoryOptions configure a MemoryStore. A zero field takes its default; a per-scope quota
// above its space's bound is that bound.
type MemoryOptions struct {
	MaxChallenges   int              // challenges held, all scopes together (default DefaultMaxChallenges)
	MaxRecords      int              // idempotency records held, all scopes together (default DefaultMaxRecords)
	ScopeChallenges int              // challenges one scope holds (default DefaultScopeChallenges)
	ScopeRecords    int              // idempotency records one scope holds (default DefaultScopeRecords)
	MaxJobs         int              // background operations' jobs held, all scopes together (default DefaultMaxJobs)
	ScopeJobs       int              // jobs one scope holds (default DefaultScopeJobs)
	Now             func() time.Time // the clock expiry is read from (default time.Now)
}

// The bounds of a MemoryStore unless its MemoryOptions say otherwise. The per-scope quotas are
// also those of a redisstore.Store. An API without an Authenticator has one principal only, so
// the MemoryStore it makes for itself gives that principal the whole of each space.
const (
	DefaultMaxChallenges   = 100_000
	DefaultMaxRecords      = 100_000
	DefaultScopeChallenges = 1_000
	DefaultScopeRecords    = 10_000
	DefaultMaxJobs         = 100_000
	DefaultScopeJobs       = 1_000
)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts MemoryOptions) *MemoryStore {
	m := &MemoryStore{now: opts.Now}
	if m.now == nil {
		m.now = time.Now
	}
	m.challenges.init("challenges", opts.MaxChallenges, DefaultMaxChallenges, opts.ScopeChallenges, DefaultScopeChallenges)
	m.records.init("idempotency records", opts.MaxRecords, DefaultMaxRecords, opts.ScopeRecords, DefaultScopeRecords)
	m.jobs.init("jobs", opts.MaxJobs, DefaultMaxJobs, opts.ScopeJobs, DefaultScopeJobs)
	return m
}

// memSpace is one bounded space of entries: a map by name, a heap by expiry (soonest first),
// and the count of each scope's entries.
type memSpace struct {
	what       string
	max, quota int
	entries    map[memKey]*memEntry
	expiry     memHeap
	scopes     map[string]int
}

type memKey struct{ scope, id string }

type memEntry struct {
	key     memKey
	expires time.Time
	index   int    // in the space's heap
	binding []byte // a challenge's
	rec     IdempotencyRecord
	job     Job // a job's
}

func (s *memSpace) init(what string, max, defMax, quota, defQuota int) {
	if max <= 0 {
		max = defMax
	}
	if quota <= 0 {
		quota = defQuota
	}
	*s = memSpace{what: what, max: max, quota: min(quota, max), entries: map[memKey]*memEntry{}, scopes: map[string]int{}}
}

// get returns the live entry under k, dropping it when it has expired.
func (s *memSpace) get(k memKey, now time.Time) *memEntry {
	e := s.entries[k]
	if e == nil {
		return nil
	}
	if !now.Before(e.expires) {
		s.remove(e)
		return nil
	}
	return e
}

func (s *memSpace) remove(e *memEntry) {
	delete(s.entries, e.key)
	heap.Remove(&s.expiry, e.index)
	if n := s.scopes[e.key.scope] - 1; n > 0 {
		s.scopes[e.key.scope] = n
	} else {
		delete(s.scopes, e.key.scope)
	}
}

// add stores e, which the space does not hold, after dropping every expired entry; it
// returns an ErrStoreFull error, storing nothing, when the space or e's scope is full of live
// entries.
func (s *memSpace) add(e *memEntry, now time.Time) error {
	for len(s.expiry) > 0 && !now.Before(s.expiry[0].expires) {
		s.remove(s.expiry[0])
	}
	switch {
	case len(s.entries) >= s.max:
		return fmt.Errorf("%w: %d %s, its bound", ErrStoreFull, len(s.entries), s.what)
	case s.scopes[e.key.scope] >= s.quota:
		return fmt.Errorf("%w: %d %s of one scope, its quota", ErrStoreFull, s.scopes[e.key.scope], s.what)
	}
	s.entries[e.key] = e
	heap.Push(&s.expiry, e)
	s.scopes[e.key.scope]++
	return nil
}

// renew makes e, which the space holds, expire at expires.
func (s *memSpace) renew(e *memEntry, expires time.Time) {
	e.expires = expires
	heap.Fix(&s.expiry, e.index)
}

// memHeap orders entries by expiry, soonest first (container/heap).
type memHeap []*memEntry

func (h memHeap) Len() int           { return len(h) }
func (h memHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h memHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *memHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *memHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// PutChallenge implements ConfirmStore.
func (m *MemoryStore) PutChallenge(ctx context.Context, scope, id string, binding []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	k := memKey{scope, id}
	if e := m.challenges.get(k, now); e != nil {
		e.binding = bytes.Clone(binding)
		m.challenges.renew(e, now.Add(ttl))
		return nil
	}
	return m.challenges.add(&memEntry{key: k, expires: now.Add(ttl), binding: bytes.Clone(binding)}, now)
}

// TakeChallenge implements ConfirmStore.
func (m *MemoryStore) TakeChallenge(ctx context.Context, scope, id string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.challenges.get(memKey{scope, id}, m.now())
	if e == nil {
		return nil, false, nil
	}
	m.challenges.remove(e)
	return e.binding, true, nil
}

// Claim implements IdempotencyStore.
func (m *MemoryStore) Claim(ctx context.Context, scope, key string, fingerprint []byte, owner string, lease time.Duration) (IdempotencyRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return IdempotencyRecord{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	k := memKey{scope, key}
	if e := m.records.get(k, now); e != nil {
		return e.rec, false, nil
	}
	rec := IdempotencyRecord{Fingerprint: bytes.Clone(fingerprint), Owner: owner}
	if err := m.records.add(&memEntry{key: k, expires: now.Add(lease), rec: rec}, now); err != nil {
		return IdempotencyRecord{}, false, err
	}
	return rec, true, nil
}

// owned returns the in-flight record under scope and key that owner holds. m.mu is held.
func (m *MemoryStore) owned(scope, key, owner string, now time.Time) (*memEntry, error) {
	e := m.records.get(memKey{scope, key}, now)
	if e == nil || e.rec.Completed || e.rec.Owner != owner {
		return nil, ErrNotOwner
	}
	return e, nil
}

// Complete implements IdempotencyStore.
func (m *MemoryStore) Complete(ctx context.Context, scope, key, owner string, result StoredResponse, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e, err := m.owned(scope, key, owner, now)
	if err != nil {
		return err
	}
	e.rec.Completed = true
	e.rec.Result = StoredResponse{Status: result.Status, Header: cloneHeader(result.Header), Body: bytes.Clone(result.Body)}
	m.records.renew(e, now.Add(ttl))
	return nil
}

// Release implements IdempotencyStore.
func (m *MemoryStore) Release(ctx context.Context, scope, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.owned(scope, key, owner, m.now())
	if err != nil {
		return err
	}
	m.records.remove(e)
	return nil
}

// Len is how many entries the store holds, challenges, records and jobs together, expired
// ones not yet dropped included.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.challenges.entries) + len(m.records.entries) + len(m.jobs.entries)
}

// PutJob implements JobStore: an ended job is final (ErrJobEnded).
func (m *MemoryStore) PutJob(ctx context.Context, scope, id string, job Job, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	job.Body = bytes.Clone(job.Body)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	k := memKey{scope, id}
	if e := m.jobs.get(k, now); e != nil {
		if e.job.State != JobRunning {
			return ErrJobEnded
		}
		e.job = job
		m.jobs.renew(e, now.Add(ttl))
		return nil
	}
	return m.jobs.add(&memEntry{key: k, expires: now.Add(ttl), job: job}, now)
}

// GetJob implements JobStore.
func (m *MemoryStore) GetJob(ctx context.Context, scope, id string) (Job, bool, error) {
	if err := ctx.Err(); err != nil {
		return Job{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.jobs.get(memKey{scope, id}, m.now())
	if e == nil {
		return Job{}, false, nil
	}
	job := e.job
	job.Body = bytes.Clone(job.Body)
	return job, true, nil
}

func cloneHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	return h.Clone()
}
