package client

import "sync/atomic"

// RetryBudget is a client-wide token bucket that keeps an outage from becoming a retry storm:
// every unchanged retry spends a token, every successful call refunds a fraction of one, and
// when the bucket is empty failures are returned at once instead of retried. Over any period
// the retries sent are at most the capacity plus refund × the successes. It is safe for
// concurrent use; one budget is meant to be shared by every call of a client.
type RetryBudget struct {
	milli    atomic.Int64 // tokens × 1000
	capacity int64
	refund   int64
}

// DefaultRetryBudget is the budget a Client gets unless WithRetryBudget says otherwise: 10
// tokens, 0.1 refunded per success — the numbers of gRPC's retry throttling (maxTokens 10,
// tokenRatio 0.1). A hard outage that hits 50 concurrent calls costs at most 60 requests (the
// 50 first attempts and 10 retries), where the old 100-token default let it cost 150; a 5%
// transient fault rate spends 0.05 tokens per call and earns 0.095 back, so the bucket stays
// full and every fault is retried. (AWS SDKs' retry quota, 500 units at 5 per retry and 1
// back per success, allows 100 retries into an outage; Finagle's budget, 20% of requests,
// allows 10 for 50 calls plus a floor per second.)
func DefaultRetryBudget() *RetryBudget { return NewRetryBudget(10, 0.1) }

// NewRetryBudget returns a full budget of capacity tokens, refunding refund tokens per
// success (0.1 is one retry per ten successes). Non-positive capacity means 1.
func NewRetryBudget(capacity int, refund float64) *RetryBudget {
	b := &RetryBudget{capacity: int64(max(capacity, 1)) * 1000}
	if refund > 0 {
		b.refund = int64(min(refund, float64(capacity)) * 1000)
	}
	b.milli.Store(b.capacity)
	return b
}

// Tokens is how many retries the budget allows now.
func (b *RetryBudget) Tokens() float64 { return float64(b.milli.Load()) / 1000 }

// available reports whether a retry could be spent now (for the decision, which is pure).
func (b *RetryBudget) available() bool { return b == nil || b.milli.Load() >= 1000 }

// spend takes one token; false when none is left.
func (b *RetryBudget) spend() bool {
	if b == nil {
		return true
	}
	for {
		n := b.milli.Load()
		if n < 1000 {
			return false
		}
		if b.milli.CompareAndSwap(n, n-1000) {
			return true
		}
	}
}

// succeed refunds a fraction of a token, up to the capacity.
func (b *RetryBudget) succeed() {
	if b == nil || b.refund == 0 {
		return
	}
	for {
		n := b.milli.Load()
		if n >= b.capacity {
			return
		}
		if b.milli.CompareAndSwap(n, min(n+b.refund, b.capacity)) {
			return
		}
	}
}
