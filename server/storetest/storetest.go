// Package storetest is the shared test suite of the stores behind confirmation and idempotency:
// every implementation of server.ConfirmStore and server.IdempotencyStore runs Run, so that they
// all keep one contract.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/remedy-go/remedy/internal/testkit/margin"
	"github.com/remedy-go/remedy/server"
)

// Stores is what the suite tests: both stores in one value.
type Stores interface {
	server.ConfirmStore
	server.IdempotencyStore
}

// The durations of the suite. Short is what a test lets expire: advancing by Past runs it out.
// Long is what must outlive the test. The tests that need something stored for Short to be
// still there after a few calls measure how long the calls took, in real time: when a slow
// machine took Short or longer, they try again with twice the durations.
const (
	Short = 50 * time.Millisecond
	Past  = 75 * time.Millisecond
	Long  = time.Hour
)

// Limits are the per-scope quotas a test needs its store to keep: at most ScopeChallenges
// live challenges and ScopeRecords live idempotency records in one scope. A zero field leaves
// the store's default.
type Limits struct {
	ScopeChallenges int
	ScopeRecords    int
}

// quota is the per-scope quota of the tests of quotas: small, so that they fill it.
const quota = 5

// Run runs the suite. newStore returns a fresh, empty store that keeps limits, and a function
// that moves the store's clock forward by d (a fake clock for the memory store; a sleep for
// Redis, whose clock is real). Each subtest calls newStore once and runs in parallel with the
// others.
func Run(t *testing.T, newStore func(t *testing.T, limits Limits) (Stores, func(d time.Duration))) {
	for _, tc := range []struct {
		name   string
		limits Limits
		test   func(t *testing.T, s Stores, advance func(time.Duration))
	}{
		{"Challenge/RoundTrip", Limits{}, challengeRoundTrip},
		{"Challenge/TakenOnce", Limits{}, challengeTakenOnce},
		{"Challenge/Unknown", Limits{}, challengeUnknown},
		{"Challenge/Expired", Limits{}, challengeExpired},
		{"Challenge/Replaced", Limits{}, challengeReplaced},
		{"Challenge/ConcurrentTakes", Limits{}, challengeConcurrentTakes},
		{"Challenge/Copied", Limits{}, challengeCopied},
		{"Idempotency/FirstClaim", Limits{}, firstClaim},
		{"Idempotency/InFlight", Limits{}, inFlight},
		{"Idempotency/Complete", Limits{}, complete},
		{"Idempotency/CompleteEmptyResult", Limits{}, completeEmptyResult},
		{"Idempotency/CompleteCopied", Limits{}, completeCopied},
		{"Idempotency/CompleteTwice", Limits{}, completeTwice},
		{"Idempotency/CompleteByAnother", Limits{}, completeByAnother},
		{"Idempotency/CompleteUnclaimed", Limits{}, completeUnclaimed},
		{"Idempotency/ReleaseByOwner", Limits{}, releaseByOwner},
		{"Idempotency/ReleaseByAnother", Limits{}, releaseByAnother},
		{"Idempotency/ReleaseCompleted", Limits{}, releaseCompleted},
		{"Idempotency/ReleaseUnclaimed", Limits{}, releaseUnclaimed},
		{"Idempotency/CompleteAfterRelease", Limits{}, completeAfterRelease},
		{"Idempotency/LeaseExpired", Limits{}, leaseExpired},
		{"Idempotency/CompleteOutlivesLease", Limits{}, completeOutlivesLease},
		{"Idempotency/RetentionExpired", Limits{}, retentionExpired},
		{"Idempotency/ConcurrentClaims", Limits{}, concurrentClaims},
		{"Idempotency/DistinctKeys", Limits{}, distinctKeys},
		{"ChallengesAndRecordsApart", Limits{}, challengesAndRecordsApart},
		{"ScopesApart", Limits{}, scopesApart},
		{"CancelledContext", Limits{}, cancelledContext},
		{"Quota/ChallengesNeverEvictRecords", Limits{quota, quota}, challengesNeverEvictRecords},
		{"Quota/RecordsNeverEvictChallenges", Limits{quota, quota}, recordsNeverEvictChallenges},
		{"Quota/PerScope", Limits{quota, quota}, quotaPerScope},
		{"Quota/FullRefusesNeverEvicts", Limits{quota, quota}, fullRefusesNeverEvicts},
		{"Quota/FreedByTakeAndRelease", Limits{quota, quota}, quotaFreedByTakeAndRelease},
		{"Quota/FreedByExpiry", Limits{quota, quota}, quotaFreedByExpiry},
		{"Quota/ConcurrentClaims", Limits{quota, quota}, quotaConcurrentClaims},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, advance := newStore(t, tc.limits)
			mustNotNil(t, s, "newStore returned no store")
			mustNotNil(t, advance, "newStore returned no clock")
			tc.test(t, s, advance)
		})
	}
}

// The scopes of the suite's entries: most tests keep to scope; the tests of scopes and quotas
// use otherScope too.
const (
	scope      = "c2NvcGUtYQ"
	otherScope = "c2NvcGUtYg"
)

// binary is a binding, fingerprint or body that is not text: zero bytes, invalid UTF-8, a CRLF.
var binary = []byte{0, 1, 2, 0xff, 0xfe, 0, '\r', '\n', 0x80, 'x', 0}

// fp returns a distinct binary fingerprint for name.
func fp(name string) []byte {
	return append([]byte{0, 0xff}, name...)
}

// sampleResult is a response with repeated headers, an empty value and a binary body.
func sampleResult() server.StoredResponse {
	return server.StoredResponse{
		Status: http.StatusCreated,
		Header: http.Header{
			"Content-Type": {"application/octet-stream"},
			"Location":     {"/orders/42"},
			"Link":         {"</a>; rel=a", "</b>; rel=b"},
			"X-Empty":      {""},
		},
		Body: append([]byte("order\x00"), binary...),
	}
}

// claim claims key and requires the claim to succeed with what it was given.
func claim(t *testing.T, s Stores, key string, fingerprint []byte, owner string, lease time.Duration) {
	t.Helper()
	rec, claimed, err := s.Claim(context.Background(), scope, key, fingerprint, owner, lease)
	mustNoError(t, err, "Claim(%q, %q)", key, owner)
	mustTrue(t, claimed, "Claim(%q, %q) of a free key: not claimed, record %+v", key, owner, rec)
	checkEqual(t, fingerprint, rec.Fingerprint, "the claimed record's fingerprint")
	checkEqual(t, owner, rec.Owner, "the claimed record's owner")
	checkFalse(t, rec.Completed, "a fresh claim is completed")
}

// requireInFlight claims key as a probe and requires it held in flight by owner with fingerprint.
func requireInFlight(t *testing.T, s Stores, key string, fingerprint []byte, owner string) {
	t.Helper()
	rec, claimed, err := s.Claim(context.Background(), scope, key, fp("probe"), "probe", Long)
	mustNoError(t, err, "Claim(%q)", key)
	mustFalse(t, claimed, "key %q was free; want it in flight for %q", key, owner)
	checkFalse(t, rec.Completed, "key %q is completed; want it in flight for %q", key, owner)
	checkEqual(t, owner, rec.Owner, "the owner of key %q", key)
	checkEqual(t, fingerprint, rec.Fingerprint, "the fingerprint of key %q", key)
}

// requireCompleted claims key as a probe and requires it completed with result and fingerprint.
func requireCompleted(t *testing.T, s Stores, key string, fingerprint []byte, result server.StoredResponse) {
	t.Helper()
	rec, claimed, err := probe(s, key)
	checkCompleted(t, key, rec, claimed, err, fingerprint, result)
}

// probe claims key as a probe, for a Long lease.
func probe(s Stores, key string) (server.IdempotencyRecord, bool, error) {
	return s.Claim(context.Background(), scope, key, fp("probe"), "probe", Long)
}

// checkCompleted requires what a probe of key returned to be its completed record, with
// result and fingerprint.
func checkCompleted(t *testing.T, key string, rec server.IdempotencyRecord, claimed bool, err error, fingerprint []byte, result server.StoredResponse) {
	t.Helper()
	mustNoError(t, err, "Claim(%q)", key)
	mustFalse(t, claimed, "key %q was free; want it completed", key)
	mustTrue(t, rec.Completed, "key %q is in flight (owner %q); want it completed", key, rec.Owner)
	checkEqual(t, fingerprint, rec.Fingerprint, "the fingerprint of key %q", key)
	checkEqual(t, result, rec.Result, "the result of key %q", key)
}

// requireFree claims key for owner and requires the claim to succeed.
func requireFree(t *testing.T, s Stores, key, owner string) {
	t.Helper()
	claim(t, s, key, fp(owner), owner, Long)
}

func challengeRoundTrip(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "c1", binary, Long))
	got, ok, err := s.TakeChallenge(ctx, scope, "c1")
	mustNoError(t, err)
	mustTrue(t, ok, "TakeChallenge of a challenge just put")
	checkEqual(t, binary, got, "the binding taken")

	// An empty binding is a binding.
	mustNoError(t, s.PutChallenge(ctx, scope, "c2", []byte{}, Long))
	got, ok, err = s.TakeChallenge(ctx, scope, "c2")
	mustNoError(t, err)
	mustTrue(t, ok, "TakeChallenge of an empty binding")
	checkEmpty(t, got, "the empty binding taken")
}

func challengeTakenOnce(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "c", binary, Long))
	_, ok, err := s.TakeChallenge(ctx, scope, "c")
	mustNoError(t, err)
	mustTrue(t, ok, "the first take")
	got, ok, err := s.TakeChallenge(ctx, scope, "c")
	mustNoError(t, err)
	checkFalse(t, ok, "a second take of one challenge: ok, binding %q", got)
}

func challengeUnknown(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "known", binary, Long))
	for _, id := range []string{"unknown", "", "know", "known\x00"} {
		got, ok, err := s.TakeChallenge(ctx, scope, id)
		mustNoError(t, err, "TakeChallenge(%q)", id)
		checkFalse(t, ok, "TakeChallenge(%q) of an id never put: ok, binding %q", id, got)
	}
	_, ok, err := s.TakeChallenge(ctx, scope, "known")
	mustNoError(t, err)
	checkTrue(t, ok, "the challenge put, after takes of other ids")
}

func challengeExpired(t *testing.T, s Stores, advance func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "short", binary, Short))
	mustNoError(t, s.PutChallenge(ctx, scope, "long", binary, Long))
	advance(Past)
	got, ok, err := s.TakeChallenge(ctx, scope, "short")
	mustNoError(t, err)
	checkFalse(t, ok, "a challenge taken %v after it was put for %v: ok, binding %q", Past, Short, got)
	_, ok, err = s.TakeChallenge(ctx, scope, "long")
	mustNoError(t, err)
	checkTrue(t, ok, "a challenge put for %v, taken after %v", Long, Past)
}

func challengeReplaced(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "c", []byte("first"), Long))
	mustNoError(t, s.PutChallenge(ctx, scope, "c", []byte("second"), Long))
	got, ok, err := s.TakeChallenge(ctx, scope, "c")
	mustNoError(t, err)
	mustTrue(t, ok)
	checkEqual(t, []byte("second"), got, "a challenge put twice under one id holds the second binding")
}

func challengeConcurrentTakes(t *testing.T, s Stores, _ func(time.Duration)) {
	const takers = 100
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "c", binary, Long))
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		oks   int
		errs  []error
	)
	for range takers {
		wg.Go(func() {
			<-start
			got, ok, err := s.TakeChallenge(ctx, scope, "c")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				oks++
				if string(got) != string(binary) {
					errs = append(errs, fmt.Errorf("the winning take got binding %q", got))
				}
			}
		})
	}
	close(start)
	wg.Wait()
	checkEmpty(t, errs)
	checkEqual(t, 1, oks, "of %d concurrent takes of one challenge, how many got it", takers)
}

func challengeCopied(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	binding := []byte("binding")
	mustNoError(t, s.PutChallenge(ctx, scope, "c", binding, Long))
	copy(binding, "XXXXXXX") // the caller reuses its buffer
	got, ok, err := s.TakeChallenge(ctx, scope, "c")
	mustNoError(t, err)
	mustTrue(t, ok)
	checkEqual(t, []byte("binding"), got, "the binding after the caller changed the slice it put")
}

func firstClaim(t *testing.T, s Stores, _ func(time.Duration)) {
	claim(t, s, "k", binary, "owner-1", Long)
}

func inFlight(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", fp("first"), "owner-1", Long)
	rec, claimed, err := s.Claim(ctx, scope, "k", fp("second"), "owner-2", Long)
	mustNoError(t, err)
	checkFalse(t, claimed, "a second claim of a key in flight")
	checkEqual(t, server.IdempotencyRecord{Fingerprint: fp("first"), Owner: "owner-1"}, rec,
		"the record a second claim sees")
}

func complete(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long))
	requireCompleted(t, s, "k", binary, sampleResult())
	// And again: a replay changes nothing.
	requireCompleted(t, s, "k", binary, sampleResult())
}

func completeEmptyResult(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", fp("k"), "owner-1", Long)
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", server.StoredResponse{Status: http.StatusNoContent}, Long))
	rec, claimed, err := s.Claim(ctx, scope, "k", fp("k"), "owner-2", Long)
	mustNoError(t, err)
	mustFalse(t, claimed)
	mustTrue(t, rec.Completed)
	checkEqual(t, http.StatusNoContent, rec.Result.Status)
	checkEmpty(t, rec.Result.Header, "the headers of a result stored without any")
	checkEmpty(t, rec.Result.Body, "the body of a result stored without one")
}

func completeCopied(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	result := sampleResult()
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", result, Long))
	// The caller reuses what it passed.
	copy(result.Body, "XXXX")
	result.Header.Set("Location", "/changed")
	result.Header.Add("X-Added", "1")
	requireCompleted(t, s, "k", binary, sampleResult())
}

func completeTwice(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long))
	err := s.Complete(ctx, scope, "k", "owner-1", server.StoredResponse{Status: 500}, Long)
	checkErrorIs(t, err, server.ErrNotOwner, "a second Complete by the owner of a completed key")
	requireCompleted(t, s, "k", binary, sampleResult())
}

func completeByAnother(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	err := s.Complete(ctx, scope, "k", "owner-2", sampleResult(), Long)
	checkErrorIs(t, err, server.ErrNotOwner, "Complete by another owner")
	requireInFlight(t, s, "k", binary, "owner-1")
	// The owner still completes it.
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long))
	requireCompleted(t, s, "k", binary, sampleResult())
}

func completeUnclaimed(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	err := s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long)
	checkErrorIs(t, err, server.ErrNotOwner, "Complete of a key never claimed")
	requireFree(t, s, "k", "owner-2")
}

func releaseByOwner(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", fp("first"), "owner-1", Long)
	mustNoError(t, s.Release(ctx, scope, "k", "owner-1"))
	claim(t, s, "k", fp("second"), "owner-2", Long)
}

func releaseByAnother(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	err := s.Release(ctx, scope, "k", "owner-2")
	checkErrorIs(t, err, server.ErrNotOwner, "Release by another owner")
	requireInFlight(t, s, "k", binary, "owner-1")
}

func releaseCompleted(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	mustNoError(t, s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long))
	err := s.Release(ctx, scope, "k", "owner-1")
	checkErrorIs(t, err, server.ErrNotOwner, "Release of a completed key by its owner")
	requireCompleted(t, s, "k", binary, sampleResult())
}

func releaseUnclaimed(t *testing.T, s Stores, _ func(time.Duration)) {
	err := s.Release(context.Background(), scope, "k", "owner-1")
	checkErrorIs(t, err, server.ErrNotOwner, "Release of a key never claimed")
	requireFree(t, s, "k", "owner-2")
}

func completeAfterRelease(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", binary, "owner-1", Long)
	mustNoError(t, s.Release(ctx, scope, "k", "owner-1"))
	err := s.Complete(ctx, scope, "k", "owner-1", sampleResult(), Long)
	checkErrorIs(t, err, server.ErrNotOwner, "Complete after Release")
	requireFree(t, s, "k", "owner-2")
}

func leaseExpired(t *testing.T, s Stores, advance func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "k", fp("old"), "old", Short)
	advance(Past)
	claim(t, s, "k", fp("new"), "new", Long)

	// The old owner's late Complete and Release change nothing.
	err := s.Complete(ctx, scope, "k", "old", sampleResult(), Long)
	checkErrorIs(t, err, server.ErrNotOwner, "Complete by the owner whose lease ran out")
	err = s.Release(ctx, scope, "k", "old")
	checkErrorIs(t, err, server.ErrNotOwner, "Release by the owner whose lease ran out")
	requireInFlight(t, s, "k", fp("new"), "new")

	mustNoError(t, s.Complete(ctx, scope, "k", "new", sampleResult(), Long))
	requireCompleted(t, s, "k", fp("new"), sampleResult())
}

func completeOutlivesLease(t *testing.T, s Stores, advance func(time.Duration)) {
	ctx := context.Background()
	expiring(t, func(key string, short, past time.Duration) bool {
		start := time.Now()
		claim(t, s, key, binary, "owner-1", short)
		err := s.Complete(ctx, scope, key, "owner-1", sampleResult(), Long)
		if time.Since(start) >= short {
			return false // the lease may have run out before Complete reached the store
		}
		mustNoError(t, err, "Complete within the lease")
		advance(past)
		requireCompleted(t, s, key, binary, sampleResult())
		return true
	})
}

func retentionExpired(t *testing.T, s Stores, advance func(time.Duration)) {
	ctx := context.Background()
	expiring(t, func(key string, short, past time.Duration) bool {
		claim(t, s, key, binary, "owner-1", Long)
		start := time.Now()
		mustNoError(t, s.Complete(ctx, scope, key, "owner-1", sampleResult(), short))
		rec, claimed, err := probe(s, key)
		if time.Since(start) >= short {
			return false // the result may have expired before the probe reached the store
		}
		checkCompleted(t, key, rec, claimed, err, binary, sampleResult())
		advance(past)
		requireFree(t, s, key, "owner-2")
		return true
	})
}

// expiring runs try, an expiry test that first needs something stored for short to be still
// there, with short = Short and past = Past, then, for as long as try reports that it could not
// tell (it took short or longer, in real time, to make the calls that had to fall within
// short), again with a fresh key and durations twice as long (margin.Grow). A store whose clock
// is real (Redis) cannot be made to wait for a slow machine; this way the test adapts to the
// machine instead of failing on it. (A store with a fake clock is measured all the same: a try
// it need not have made costs nothing.)
func expiring(t *testing.T, try func(key string, short, past time.Duration) bool) {
	t.Helper()
	n := 0
	// Up to Short << 7 = 6.4 s: longer than any machine takes for two calls.
	margin.Grow(t, Short, Short<<7, func(short time.Duration) bool {
		n++
		return try(fmt.Sprint("k", n), short, short*Past/Short)
	})
}

func concurrentClaims(t *testing.T, s Stores, _ func(time.Duration)) {
	const claimers = 200
	ctx := context.Background()
	type outcome struct {
		rec     server.IdempotencyRecord
		claimed bool
		err     error
	}
	outcomes := make([]outcome, claimers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range claimers {
		wg.Go(func() {
			<-start
			owner := fmt.Sprint("owner-", i)
			rec, claimed, err := s.Claim(ctx, scope, "k", fp(owner), owner, Long)
			outcomes[i] = outcome{rec, claimed, err}
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, o := range outcomes {
		mustNoError(t, o.err, "claim %d", i)
		if o.claimed {
			mustEqual(t, -1, winner, "claims %d and %d of one key both claimed it", winner, i)
			winner = i
		}
	}
	mustNotEqual(t, -1, winner, "none of %d concurrent claims of a free key claimed it", claimers)
	want := server.IdempotencyRecord{Fingerprint: fp(fmt.Sprint("owner-", winner)), Owner: fmt.Sprint("owner-", winner)}
	for i, o := range outcomes {
		checkEqual(t, want, o.rec, "the record claim %d got (claimed %v)", i, o.claimed)
	}
	requireInFlight(t, s, "k", want.Fingerprint, want.Owner)
}

func distinctKeys(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	claim(t, s, "a", fp("a"), "owner-a", Long)
	claim(t, s, "b", fp("b"), "owner-b", Long)
	claim(t, s, "c", fp("c"), "owner-c", Long)
	// A key that differs only by a suffix or a zero byte is another key.
	claim(t, s, "a\x00", fp("a0"), "owner-a0", Long)
	claim(t, s, "aa", fp("aa"), "owner-aa", Long)

	mustNoError(t, s.Complete(ctx, scope, "a", "owner-a", sampleResult(), Long))
	mustNoError(t, s.Release(ctx, scope, "b", "owner-b"))
	// Owners are per key: a's owner cannot complete c.
	checkErrorIs(t, s.Complete(ctx, scope, "c", "owner-a", sampleResult(), Long), server.ErrNotOwner)

	requireCompleted(t, s, "a", fp("a"), sampleResult())
	requireFree(t, s, "b", "owner-b2")
	requireInFlight(t, s, "c", fp("c"), "owner-c")
	requireInFlight(t, s, "a\x00", fp("a0"), "owner-a0")
	requireInFlight(t, s, "aa", fp("aa"), "owner-aa")
}

func challengesAndRecordsApart(t *testing.T, s Stores, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutChallenge(ctx, scope, "x", []byte("binding"), Long))
	claim(t, s, "x", fp("x"), "owner-x", Long)
	got, ok, err := s.TakeChallenge(ctx, scope, "x")
	mustNoError(t, err)
	mustTrue(t, ok, "a challenge, after a claim of an idempotency key named like it")
	checkEqual(t, []byte("binding"), got)
	requireInFlight(t, s, "x", fp("x"), "owner-x")
}

func cancelledContext(t *testing.T, s Stores, _ func(time.Duration)) {
	bg := context.Background()
	mustNoError(t, s.PutChallenge(bg, scope, "taken", binary, Long))
	claim(t, s, "owned", binary, "owner-1", Long)

	ctx, cancel := context.WithCancel(bg)
	cancel()
	notOwner := func(t *testing.T, err error, call string) {
		t.Helper()
		if checkError(t, err, call) {
			checkFalse(t, errors.Is(err, server.ErrNotOwner), "%s with a cancelled context: %v; want an error that is not ErrNotOwner", call, err)
		}
	}
	checkError(t, s.PutChallenge(ctx, scope, "put", binary, Long), "PutChallenge")
	_, ok, err := s.TakeChallenge(ctx, scope, "taken")
	checkError(t, err, "TakeChallenge")
	checkFalse(t, ok, "TakeChallenge with a cancelled context: ok")
	_, claimed, err := s.Claim(ctx, scope, "claimed", binary, "owner-2", Long)
	checkError(t, err, "Claim")
	checkFalse(t, claimed, "Claim with a cancelled context: claimed")
	notOwner(t, s.Complete(ctx, scope, "owned", "owner-1", sampleResult(), Long), "Complete")
	notOwner(t, s.Release(ctx, scope, "owned", "owner-1"), "Release")

	// None of them reached the store.
	_, ok, err = s.TakeChallenge(bg, scope, "put")
	mustNoError(t, err)
	checkFalse(t, ok, "a challenge put with a cancelled context was stored")
	_, ok, err = s.TakeChallenge(bg, scope, "taken")
	mustNoError(t, err)
	checkTrue(t, ok, "a challenge was taken with a cancelled context")
	requireFree(t, s, "claimed", "owner-3")
	requireInFlight(t, s, "owned", binary, "owner-1")
}

// Clock is a clock that moves only when told to, for stores (and APIs) that take one.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock set to a fixed time.
func NewClock() *Clock { return &Clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
