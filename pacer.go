package remedy

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Pacer keeps, for each key, the earliest time a server said a request can succeed again (a
// 429 or 503 with Retry-After, RateLimit fields with nothing remaining), so that every call
// that shares the pacer waits until then instead of being refused in turn. The loop's key is
// the server's origin ("https://api.example.com"); a pacer shared between clients, and between
// processes (package redispacer), paces them together.
//
// A pacer only ever delays a call to a time a server stated: it never drops or reorders calls,
// and a key no server spoke of is not held. A pacer that fails (a store that does not answer)
// paces nothing: the call goes as it would without one.
type Pacer interface {
	// Until returns the latest time held for key, or the zero time when none is held.
	Until(ctx context.Context, key string) (time.Time, error)
	// Hold records that no request under key can succeed before t. A time no later than the
	// one held changes nothing: a server's earlier word never shortens a wait it stated.
	Hold(ctx context.Context, key string, t time.Time) error
}

// memoryPacerKeys bounds the keys a MemoryPacer keeps: the origins a client calls, with room
// to spare. When it is full, the holds that have passed are forgotten first, then the one that
// ends soonest: forgetting a hold never sends a request early that the loop would not have sent
// without a pacer.
const memoryPacerKeys = 4096

// MemoryPacer is the Pacer of one process: every Client has one unless WithPacer gives
// another, and one can be shared by several clients (and MCP clients, through their Loop). It
// is safe for concurrent use.
type MemoryPacer struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// NewPacer returns an empty MemoryPacer.
func NewPacer() *MemoryPacer { return &MemoryPacer{until: make(map[string]time.Time)} }

// Until returns the time held for key, or the zero time.
func (p *MemoryPacer) Until(_ context.Context, key string) (time.Time, error) {
	p.mu.Lock()
	t := p.until[key]
	p.mu.Unlock()
	return t, nil
}

// Hold keeps t for key when it is later than the time held.
func (p *MemoryPacer) Hold(_ context.Context, key string, t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = make(map[string]time.Time)
	}
	old, held := p.until[key]
	if held && !t.After(old) {
		return nil
	}
	if !held && len(p.until) >= memoryPacerKeys {
		p.evict()
	}
	p.until[key] = t
	return nil
}

// evict forgets the holds that have passed, and, when that is not enough, the eighth of the
// holds that end soonest: in a batch, so that a full pacer sorts once per many new keys.
func (p *MemoryPacer) evict() {
	now := time.Now()
	for k, t := range p.until {
		if !t.After(now) {
			delete(p.until, k)
		}
	}
	if len(p.until) < memoryPacerKeys {
		return
	}
	type hold struct {
		key string
		t   time.Time
	}
	holds := make([]hold, 0, len(p.until))
	for k, t := range p.until {
		holds = append(holds, hold{k, t})
	}
	slices.SortFunc(holds, func(a, b hold) int { return a.t.Compare(b.t) })
	for _, h := range holds[:len(holds)/8] {
		delete(p.until, h.key)
	}
}

// Unpaced is the Pacer that holds nothing: WithPacer(Unpaced), or a Loop's Pacer for package
// mcp's client, turns pacing off where a default would pace. It is a constant, so that no part
// of a program can change what another part's choice means.
const Unpaced unpaced = 0

// unpaced is Unpaced's type.
type unpaced uint8

// Until holds nothing.
func (unpaced) Until(context.Context, string) (time.Time, error) { return time.Time{}, nil }

// Hold keeps nothing.
func (unpaced) Hold(context.Context, string, time.Time) error { return nil }
