package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
)

// The tests of scopes and quotas. Their stores keep quota live challenges and quota live
// records per scope.

// requireFull requires err to be the refusal of a full store or scope.
func requireFull(t *testing.T, err error, call string) {
	t.Helper()
	mustError(t, err, "%s beyond the quota of %d", call, quota)
	mustErrorIs(t, err, server.ErrStoreFull, "%s beyond the quota of %d", call, quota)
}

// fillChallenges puts quota challenges in sc, ids prefix0 to prefix(quota-1), for ttl.
func fillChallenges(t *testing.T, s Stores, sc, prefix string, ttl time.Duration) {
	t.Helper()
	for i := range quota {
		mustNoError(t, s.PutChallenge(context.Background(), sc, fmt.Sprint(prefix, i), []byte{byte(i)}, ttl), "challenge %d of %d", i, quota)
	}
}

// fillRecords claims quota keys in sc, prefix0 to prefix(quota-1), for lease, owned by their
// own names.
func fillRecords(t *testing.T, s Stores, sc, prefix string, lease time.Duration) {
	t.Helper()
	for i := range quota {
		key := fmt.Sprint(prefix, i)
		_, claimed, err := s.Claim(context.Background(), sc, key, fp(key), key, lease)
		mustNoError(t, err, "claim %d of %d", i, quota)
		mustTrue(t, claimed, "claim %d of %d", i, quota)
	}
}

func scopesApart(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	// One id in two scopes is two entries.
	mustNoError(t, s.PutChallenge(ctx, scope, "c", []byte("a"), Long))
	mustNoError(t, s.PutChallenge(ctx, otherScope, "c", []byte("b"), Long))
	got, ok, err := s.TakeChallenge(ctx, otherScope, "c")
	mustNoError(t, err)
	mustTrue(t, ok, "the challenge of the other scope")
	checkEqual(t, []byte("b"), got)
	got, ok, err = s.TakeChallenge(ctx, scope, "c")
	mustNoError(t, err)
	mustTrue(t, ok, "the challenge of the first scope, after the other's was taken")
	checkEqual(t, []byte("a"), got)

	claim(t, s, "k", fp("a"), "owner-a", Long)
	rec, claimed, err := s.Claim(ctx, otherScope, "k", fp("b"), "owner-b", Long)
	mustNoError(t, err)
	mustTrue(t, claimed, "a key of another scope, named like one in flight: record %+v", rec)
	checkErrorIs(t, s.Release(ctx, otherScope, "k", "owner-a"), server.ErrNotOwner, "Release by the owner of the key in the first scope, in the other")
	mustNoError(t, s.Complete(ctx, otherScope, "k", "owner-b", sampleResult(), Long))
	requireInFlight(t, s, "k", fp("a"), "owner-a")
}

// Filling a scope's challenges never touches its records: neither those it holds, in flight
// or completed, nor its room for new ones.
func challengesNeverEvictRecords(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "done", fp("done"), "owner-done", Long)
	mustNoError(t, s.Complete(ctx, scope, "done", "owner-done", sampleResult(), Long))
	claim(t, s, "running", fp("running"), "owner-running", Long)

	fillChallenges(t, s, scope, "c", Long)
	for i := range 3 * quota {
		requireFull(t, s.PutChallenge(ctx, scope, fmt.Sprint("more", i), nil, Long), "PutChallenge")
	}

	requireCompleted(t, s, "done", fp("done"), sampleResult())
	requireInFlight(t, s, "running", fp("running"), "owner-running")
	claim(t, s, "new", fp("new"), "owner-new", Long)
	// And the challenges that were put are all there.
	for i := range quota {
		got, ok, err := s.TakeChallenge(ctx, scope, fmt.Sprint("c", i))
		mustNoError(t, err)
		mustTrue(t, ok, "challenge %d of a full scope", i)
		checkEqual(t, []byte{byte(i)}, got)
	}
}

// Filling a scope's records never touches its challenges.
func recordsNeverEvictChallenges(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "c", binary, Long))
	fillRecords(t, s, scope, "k", Long)
	_, claimed, err := s.Claim(ctx, scope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim")
	checkFalse(t, claimed)
	mustNoError(t, s.PutChallenge(ctx, scope, "c2", binary, Long), "a challenge, in a scope whose records are full")
	for _, id := range []string{"c", "c2"} {
		_, ok, err := s.TakeChallenge(ctx, scope, id)
		mustNoError(t, err)
		checkTrue(t, ok, "challenge %q of a scope whose records are full", id)
	}
}

// A scope at its quota does not stop another scope.
func quotaPerScope(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	fillChallenges(t, s, scope, "c", Long)
	fillRecords(t, s, scope, "k", Long)
	requireFull(t, s.PutChallenge(ctx, scope, "more", nil, Long), "PutChallenge")
	_, _, err := s.Claim(ctx, scope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim")

	// The other scope has all of its quota.
	fillChallenges(t, s, otherScope, "c", Long)
	fillRecords(t, s, otherScope, "k", Long)
	requireFull(t, s.PutChallenge(ctx, otherScope, "more", nil, Long), "PutChallenge in the other scope")
	_, _, err = s.Claim(ctx, otherScope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim in the other scope")
}

// A full scope refuses what is new with ErrStoreFull, and keeps every live entry: in flight,
// completed, challenge. What it holds already is still answered, replaced and completed.
func fullRefusesNeverEvicts(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	fillRecords(t, s, scope, "k", Long)
	mustNoError(t, s.Complete(ctx, scope, "k0", "k0", sampleResult(), Long), "Complete in a full scope")
	mustNoError(t, s.Complete(ctx, scope, "k1", "k1", sampleResult(), Long), "Complete in a full scope")
	fillChallenges(t, s, scope, "c", Long)

	for i := range 3 * quota {
		key := fmt.Sprint("new", i)
		rec, claimed, err := s.Claim(ctx, scope, key, fp(key), key, Long)
		requireFull(t, err, "Claim")
		checkFalse(t, claimed, "Claim refused as full: claimed")
		checkEqual(t, server.IdempotencyRecord{}, rec, "Claim refused as full: the record")
		requireFull(t, s.PutChallenge(ctx, scope, key, nil, Long), "PutChallenge")
	}

	// Nothing was forgotten, and a refused key was not claimed.
	requireCompleted(t, s, "k0", fp("k0"), sampleResult())
	requireCompleted(t, s, "k1", fp("k1"), sampleResult())
	for i := 2; i < quota; i++ {
		key := fmt.Sprint("k", i)
		requireInFlight(t, s, key, fp(key), key)
	}
	_, _, err := s.Claim(ctx, scope, "new0", fp("new0"), "again", Long)
	requireFull(t, err, "Claim of a key refused before")
	// A challenge the scope holds may be put again: it takes no more room.
	mustNoError(t, s.PutChallenge(ctx, scope, "c0", []byte("again"), Long), "PutChallenge of an id the full scope holds")
	got, ok, err := s.TakeChallenge(ctx, scope, "c0")
	mustNoError(t, err)
	mustTrue(t, ok)
	checkEqual(t, []byte("again"), got)
	for i := 1; i < quota; i++ {
		_, ok, err := s.TakeChallenge(ctx, scope, fmt.Sprint("c", i))
		mustNoError(t, err)
		checkTrue(t, ok, "challenge %d of a full scope", i)
	}
}

// A taken challenge and a released claim give their room back; a completion needs none.
func quotaFreedByTakeAndRelease(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	fillChallenges(t, s, scope, "c", Long)
	requireFull(t, s.PutChallenge(ctx, scope, "more", nil, Long), "PutChallenge")
	_, ok, err := s.TakeChallenge(ctx, scope, "c0")
	mustNoError(t, err)
	mustTrue(t, ok)
	mustNoError(t, s.PutChallenge(ctx, scope, "more", nil, Long), "PutChallenge after a challenge was taken")
	requireFull(t, s.PutChallenge(ctx, scope, "more2", nil, Long), "PutChallenge")

	fillRecords(t, s, scope, "k", Long)
	for i := range quota {
		key := fmt.Sprint("k", i)
		mustNoError(t, s.Complete(ctx, scope, key, key, sampleResult(), Long), "Complete %d in a full scope", i)
	}
	_, _, err = s.Claim(ctx, scope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim")
	// A released claim frees its room (in a scope of its own, whose claims stay in flight).
	fillRecords(t, s, otherScope, "r", Long)
	_, _, err = s.Claim(ctx, otherScope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim in the other scope")
	mustNoError(t, s.Release(ctx, otherScope, "r0", "r0"))
	_, claimed, err := s.Claim(ctx, otherScope, "more", fp("more"), "owner", Long)
	mustNoError(t, err, "Claim after a release")
	checkTrue(t, claimed, "Claim after a release")
}

// Expired entries give their room back.
func quotaFreedByExpiry(t *testing.T, s Stores, advance func(time.Duration)) {
	ctx := context.Background()
	fillChallenges(t, s, scope, "c", Short)
	fillRecords(t, s, scope, "k", Short)
	advance(Past)
	fillChallenges(t, s, scope, "d", Long)
	fillRecords(t, s, scope, "l", Long)
	requireFull(t, s.PutChallenge(ctx, scope, "more", nil, Long), "PutChallenge")
	_, _, err := s.Claim(ctx, scope, "more", fp("more"), "owner", Long)
	requireFull(t, err, "Claim")
}

// Of many concurrent claims of distinct keys in one scope, exactly quota get theirs.
func quotaConcurrentClaims(t *testing.T, s Stores, _ func(time.Duration)) {
	const claimers = 50
	ctx := context.Background()
	var (
		wg             sync.WaitGroup
		start          = make(chan struct{})
		mu             sync.Mutex
		claimed, fulls int
		errs           []error
	)
	for i := range claimers {
		wg.Go(func() {
			<-start
			key := fmt.Sprint("k", i)
			_, ok, err := s.Claim(ctx, scope, key, fp(key), key, Long)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && ok:
				claimed++
			case errors.Is(err, server.ErrStoreFull):
				fulls++
			default:
				errs = append(errs, fmt.Errorf("claim %d: claimed %v, %v", i, ok, err))
			}
		})
	}
	close(start)
	wg.Wait()
	checkEmpty(t, errs)
	checkEqual(t, quota, claimed, "of %d concurrent claims in a scope of quota %d, how many claimed", claimers, quota)
	checkEqual(t, claimers-quota, fulls, "of %d concurrent claims in a scope of quota %d, how many were refused as full", claimers, quota)
}
