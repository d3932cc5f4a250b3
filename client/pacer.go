package client

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Pacer keeps, for each key, what servers said of their rate limits, so that every call that
// shares the pacer waits for the time a server stated instead of being refused in turn: the
// earliest time a request can succeed again (a 429 or 503 with Retry-After, RateLimit fields
// with nothing remaining), and how many requests the server still admits until its limit
// resets (RateLimit-Remaining and its kin, on any answer). The loop's key is the server's
// origin ("https://api.example.com"); a pacer shared between clients, and between processes
// (package redispacer), paces them together.
//
// A pacer only ever delays a call to a time a server stated: it never drops or reorders calls,
// and a key no server spoke of is not held. A pacer that fails (a store that does not answer)
// paces nothing: the call goes as it would without one.
type Pacer interface {
	// Take asks leave to send one request under key. When a server said no request can
	// succeed before some time, or the requests it said it admits until its reset are all
	// taken, Take returns that time, counting nothing: the caller waits until then and asks
	// again. Otherwise it returns the zero time and counts the request against what remains,
	// in flight until Learn is told of its answer.
	Take(ctx context.Context, key string) (time.Time, error)
	// Learn records what the answer to a request Take let go said of the server's limit (the
	// zero Limit when there was no answer, or it said nothing), and ends the request's time in
	// flight. Every Take that let a request go is followed by one Learn. The loop also calls
	// Learn, with the same Limit, for the limit an answer named when its request was taken
	// under another key (a Client's first call of an operation, see Call.Origin): an
	// implementation that counts requests in flight may count one fewer under that key until
	// its next answer, which can let one request more go than its count, never one before a
	// hold.
	Learn(ctx context.Context, key string, l Limit) error
}

// Limit is what one answer said of a server's rate limit.
type Limit struct {
	// Until is the earliest time the server said a request can succeed: the end of a
	// refusal's stated wait, or the reset of a limit with nothing remaining. A time no later
	// than the one held changes nothing: a server's earlier word never shortens a wait it
	// stated. Zero: the answer stated none.
	Until time.Time
	// Remaining is how many more requests the server said it admits until Reset, counted
	// when it answered: requests still in flight then are not yet counted, and the pacer
	// takes them off. Meaningful only with Reset.
	Remaining int
	// Reset is when the count of Remaining starts again; zero when the answer stated no count
	// of requests.
	Reset time.Time
	// Quota is how many requests the limit admits in each Window, when the server states
	// both (the IETF RateLimit-Policy's q and w): once Reset has passed and no answer has yet
	// counted the new window, Quota requests may go in it, less those still in flight, and the
	// next wait is for the window's end. Zero: after Reset, requests go as they come until an
	// answer counts them.
	Quota  int
	Window time.Duration
}

// memoryPacerKeys bounds the keys a MemoryPacer keeps: the origins a client calls, with room
// to spare. When it is full, the keys whose holds have passed and that have nothing in flight
// are forgotten first, then those whose holds end soonest: forgetting a hold never sends a
// request early that the loop would not have sent without a pacer.
const memoryPacerKeys = 4096

// MemoryPacer is the Pacer of one process: every Client has one unless WithPacer gives
// another, and one can be shared by several clients (and MCP clients, through their Loop). It
// is safe for concurrent use.
type MemoryPacer struct {
	mu   sync.Mutex
	keys map[string]*pace
}

// pace is what a pacer knows of one key.
type pace struct {
	// hold: no request before it.
	hold time.Time
	// left requests may be sent before reset, when reset is ahead; a reset that has passed
	// counts nothing.
	reset time.Time
	left  int
	// quota requests are admitted in each window after reset, when the server stated both.
	quota  int
	window time.Duration
	// inflight are the requests Take let go whose answers Learn has not been told of.
	inflight int
}

// NewPacer returns an empty MemoryPacer.
func NewPacer() *MemoryPacer { return &MemoryPacer{keys: make(map[string]*pace)} }

// Take lets a request go, or returns the time to ask again.
func (p *MemoryPacer) Take(_ context.Context, key string) (time.Time, error) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.key(key, now).take(now); !ok {
		return at, nil
	}
	return time.Time{}, nil
}

// Learn records what an answer said of key's limit.
func (p *MemoryPacer) Learn(_ context.Context, key string, l Limit) error {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, known := p.keys[key]; !known && l.Until.IsZero() && l.Reset.IsZero() {
		return nil // nothing in flight, nothing said
	}
	k := p.key(key, now)
	k.inflight = max(k.inflight-1, 0)
	k.learn(now, l.Until, l.Reset, l.Remaining-k.inflight)
	if l.Quota > 0 && l.Window > 0 {
		k.quota, k.window = l.Quota, l.Window
	}
	return nil
}

// key is what p knows of key, made when it knows nothing yet. p.mu is held.
func (p *MemoryPacer) key(key string, now time.Time) *pace {
	k := p.keys[key]
	if k == nil {
		if p.keys == nil {
			p.keys = make(map[string]*pace)
		}
		if len(p.keys) >= memoryPacerKeys {
			p.evict(now)
		}
		k = &pace{}
		p.keys[key] = k
	}
	return k
}

// take lets one request go at now (counting it against what is left, and as in flight), or
// says when to ask again.
func (k *pace) take(now time.Time) (time.Time, bool) {
	if now.Before(k.hold) {
		return k.hold, false
	}
	if k.quota > 0 && k.window > 0 && !k.reset.IsZero() && !now.Before(k.reset) {
		// The window counted has passed, and the server said how many each window admits:
		// the new one starts with them, less what is still in flight, until its end.
		k.reset = k.reset.Add(k.window * (now.Sub(k.reset)/k.window + 1))
		k.left = k.quota - k.inflight
	}
	if now.Before(k.reset) {
		if k.left <= 0 {
			return k.reset, false
		}
		k.left--
	}
	k.inflight++
	return time.Time{}, true
}

// learn raises the hold to until, and counts left requests until reset: the first count of a
// reset still ahead starts it; a later one only ever lowers it (answers come out of order, and
// each count was true when its answer was written). Its reset is the earliest the answers
// said: each is the time the answer came plus the whole seconds the server stated, no earlier
// than the true reset, and the first answer to come is the nearest to it (taking the latest
// would add to each window the spread of its answers' arrivals).
func (k *pace) learn(now, until, reset time.Time, left int) {
	if until.After(k.hold) {
		k.hold = until
	}
	if !reset.After(now) {
		return
	}
	if !now.Before(k.reset) {
		k.reset, k.left = reset, left
		return
	}
	k.left = min(k.left, left)
	if reset.Before(k.reset) {
		k.reset = reset
	}
}

// evict forgets the keys that hold nothing any longer and have nothing in flight, and, when
// that is not enough, the eighth of the keys whose holds end soonest: in a batch, so that a
// full pacer sorts once per many new keys.
func (p *MemoryPacer) evict(now time.Time) {
	for key, k := range p.keys {
		if k.inflight == 0 && !k.hold.After(now) && !k.reset.After(now) {
			delete(p.keys, key)
		}
	}
	if len(p.keys) < memoryPacerKeys {
		return
	}
	type held struct {
		key string
		end time.Time
	}
	keys := make([]held, 0, len(p.keys))
	for key, k := range p.keys {
		end := k.hold
		if k.reset.After(end) {
			end = k.reset
		}
		keys = append(keys, held{key, end})
	}
	slices.SortFunc(keys, func(a, b held) int { return a.end.Compare(b.end) })
	for _, h := range keys[:len(keys)/8] {
		delete(p.keys, h.key)
	}
}

// Unpaced is the Pacer that holds nothing: WithPacer(Unpaced), or a Loop's Pacer for package
// mcp's client, turns pacing off where a default would pace. It is a constant, so that no part
// of a program can change what another part's choice means.
const Unpaced unpaced = 0

// unpaced is Unpaced's type.
type unpaced uint8

// Take lets every request go.
func (unpaced) Take(context.Context, string) (time.Time, error) { return time.Time{}, nil }

// Learn keeps nothing.
func (unpaced) Learn(context.Context, string, Limit) error { return nil }
