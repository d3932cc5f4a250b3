package redisstore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
	"github.com/remedy-go/remedy/server/storetest"
)

// With Options.Replicas the store's contract holds on a cluster whose masters each have a
// replica: every claim and completion waits for it.
func TestClusterStoreWaitsForReplicas(t *testing.T) {
	t.Parallel()
	client := newClusterClient(t, redistest.StartCluster(t, 3, 1))
	storetest.Run(t, func(t *testing.T, l storetest.Limits) (storetest.Stores, func(time.Duration)) {
		return redisstore.New(client, redisstore.Options{Prefix: redistest.Prefix(), Replicas: 1,
			ScopeChallenges: l.ScopeChallenges, ScopeRecords: l.ScopeRecords}), time.Sleep
	})
}

// The failover TestClusterFailoverLosesUnreplicatedClaim shows, with Options.Replicas: a claim
// its master cannot get a replica to hold fails (ErrNotReplicated) and is given up, so the
// request never runs on it; once the replica is promoted, a retry claims the key and runs
// once. Either way nothing runs twice.
func TestClusterFailoverUnreplicatedClaimFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redistest.StartCluster(t, 3, 1)
	client := newClusterClient(t, c)
	prefix := redistest.Prefix()
	s := redisstore.New(client, redisstore.Options{Prefix: prefix, Replicas: 1, ReplicaTimeout: 200 * time.Millisecond})
	const scope, key = "closed", "k"
	fp := []byte("fp")

	master, replica, resume := cutOffReplica(t, c, client, scope)

	_, claimed, err := s.Claim(ctx, scope, key, fp, "first", time.Hour)
	require.ErrorIs(t, err, redisstore.ErrNotReplicated, "a claim no replica holds is not reported held")
	require.False(t, claimed)
	// Given up on the master too: while it stands, the key is free (checked without waiting
	// for replicas, which cannot answer).
	unwaited := redisstore.New(client, redisstore.Options{Prefix: prefix})
	rec, claimed, err := unwaited.Claim(ctx, scope, key, fp, "probe", time.Hour)
	require.NoError(t, err)
	require.True(t, claimed, "the failed claim was released: %+v", rec)
	require.NoError(t, unwaited.Release(ctx, scope, key, "probe"))

	c.Kill(master)
	resume()
	_, _ = untilAnswered(t, "a claim after the master was killed", func() error {
		_, claimed, err = s.Claim(ctx, scope, key, fp, "second", time.Hour)
		if errors.Is(err, redisstore.ErrNotReplicated) {
			return nil // the promoted replica has no replica of its own: it fails closed
		}
		return err
	})
	c.WaitHealthy()
	assert.Contains(t, c.Masters(), replica, "the replica was promoted")
	// The promoted master has no replica: every claim fails closed rather than run on a
	// claim a second failover could lose.
	_, claimed, err = s.Claim(ctx, scope, key, fp, "third", time.Hour)
	assert.ErrorIs(t, err, redisstore.ErrNotReplicated)
	assert.False(t, claimed)
}

// On a single Redis without replicas, Options.Replicas makes every claim fail closed (the
// operator asked for a copy that cannot be made), and Release needs no replica.
func TestReplicasWithoutReplicasFailClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	prefix := redistest.Prefix()
	s := redisstore.New(client, redisstore.Options{Prefix: prefix, Replicas: 1, ReplicaTimeout: 50 * time.Millisecond})
	_, claimed, err := s.Claim(ctx, "a", "k", []byte("fp"), "o", time.Hour)
	require.ErrorIs(t, err, redisstore.ErrNotReplicated)
	require.False(t, claimed)
	// The claim was released: a store that waits for no replica finds the key free.
	_, claimed, err = redisstore.New(client, redisstore.Options{Prefix: prefix}).Claim(ctx, "a", "k", []byte("fp"), "o2", time.Hour)
	require.NoError(t, err)
	require.True(t, claimed)
	// A ring of shards cannot say which connection wrote a key: refused, not guessed.
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": addr}})
	t.Cleanup(func() { ring.Close() })
	_, _, err = redisstore.New(ring, redisstore.Options{Prefix: redistest.Prefix(), Replicas: 1}).Claim(ctx, "a", "k", []byte("fp"), "o", time.Hour)
	require.ErrorContains(t, err, "Options.Replicas needs")
	var _ server.IdempotencyStore = s
}

// A confirmation token is single-use through a failover, as a claim is (issue 35, row 8). The
// token's challenge is on the master and its replica; the replica is cut off; the token is
// sent to the master; the master dies and the replica is promoted; the token is sent again.
// Without a wait for the replica after the take, the first send ran the operation on a take
// the promoted replica never saw, and the second ran it again. With Options.Replicas the
// first take fails closed (503, nothing run), and the operation runs at most once in all.
func TestClusterFailoverSpentTokenStaysSpent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redistest.StartCluster(t, 3, 1)
	client := newClusterClient(t, c)
	prefix := redistest.Prefix()
	const replicaTimeout = 200 * time.Millisecond
	s := redisstore.New(client, redisstore.Options{Prefix: prefix, Replicas: 1, ReplicaTimeout: replicaTimeout})
	var runs atomic.Int64
	api, err := server.New(server.WithConfirmation(server.ConfirmationOptions{Store: s}))
	require.NoError(t, err)
	require.NoError(t, server.Post(api, "/v1/payouts", func(ctx context.Context, in charge) (receipt, error) {
		run := runs.Add(1)
		return receipt{ID: "po_" + strconv.FormatInt(run, 10), Run: run}, nil
	}, server.OperationID("create_payout"), server.Confirm()))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	send := func(token string) (*remedy.Envelope, int, []byte) {
		t.Helper()
		status, h, body := post(t, srv.URL+"/v1/payouts", `{"amount":900}`, remedy.HeaderConfirmationToken, token)
		env, _ := remedy.Parse(status, h, body)
		return env, status, body
	}

	env, _, body := send("")
	require.NotNil(t, env, "%s", body)
	require.Equal(t, "confirmation_required", env.Code)
	token := env.ConfirmationToken
	// The challenge's key, found on its master; its scope names the slot.
	var challengeKey string
	for _, addr := range c.Masters() {
		keys, err := c.Node(addr).Keys(ctx, prefix+"c:*").Result()
		require.NoError(t, err)
		if len(keys) > 0 {
			challengeKey = keys[0]
		}
	}
	require.NotEmpty(t, challengeKey, "no challenge stored")
	scope := challengeKey[strings.IndexByte(challengeKey, '{')+1 : strings.IndexByte(challengeKey, '}')]

	// Replication is asynchronous: wait until the replica holds the challenge.
	slot, err := client.ClusterKeySlot(ctx, challengeKey).Result()
	require.NoError(t, err)
	replicaConn := c.Node(c.ReplicasOf(c.MasterOf(int(slot)))[0]).Conn()
	defer replicaConn.Close()
	require.NoError(t, replicaConn.ReadOnly(ctx).Err())
	require.Eventually(t, func() bool { return replicaConn.Exists(ctx, challengeKey).Val() == 1 }, clusterWait, 10*time.Millisecond,
		"the replica never had the challenge")
	require.NoError(t, replicaConn.Close())

	master, replica, resume := cutOffReplica(t, c, client, scope)
	start := time.Now()
	env, status, body := send(token)
	took := time.Since(start)
	t.Logf("the token sent with the replica cut off: %d in %v (ReplicaTimeout %v), %d runs: %s", status, took, replicaTimeout, runs.Load(), body)
	if runs.Load() == 0 {
		// Failed closed: a structured answer that nothing was done, to try again later.
		require.NotNil(t, env, "%s", body)
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Equal(t, "unavailable", env.Code)
		assert.True(t, env.Retryable)
	}

	c.Kill(master)
	resume()
	// The slot is served again once a store that waits for no replica answers in it.
	unwaited := redisstore.New(client, redisstore.Options{Prefix: prefix})
	untilAnswered(t, "a take after the master was killed", func() error {
		_, _, err := unwaited.TakeChallenge(ctx, scope, "probe")
		return err
	})
	c.WaitHealthy()
	require.Contains(t, c.Masters(), replica, "the replica was promoted")

	env, status, body = send(token)
	t.Logf("the token sent again after the failover: %d, %d runs in all: %s", status, runs.Load(), body)
	assert.LessOrEqual(t, runs.Load(), int64(1), "one token ran the operation %d times", runs.Load())
	if runs.Load() == 0 {
		// The promoted replica has no replica of its own: the take fails closed again, and
		// gives the challenge back, so that the token is still good once.
		require.NotNil(t, env, "%s", body)
		assert.Equal(t, "unavailable", env.Code, "%s", body)
		assert.EqualValues(t, 1, c.Node(replica).Exists(ctx, challengeKey).Val(), "the promoted replica lost the unspent challenge")
	}
}

// On a single Redis without replicas, Options.Replicas makes a take of a challenge fail closed
// as a claim does: ErrNotReplicated, and the challenge put back, with what was left of its
// life and counted in its scope, so that the token works once a replica holds the take.
// A take of no challenge needs no replica: it is refused either way.
func TestReplicasWithoutReplicasTakeFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Client(t, redistest.Start(t))
	prefix := redistest.Prefix()
	s := redisstore.New(client, redisstore.Options{Prefix: prefix, Replicas: 1, ReplicaTimeout: 50 * time.Millisecond, ScopeChallenges: 1})
	require.NoError(t, s.PutChallenge(ctx, "a", "c", []byte("binding"), time.Minute))

	binding, ok, err := s.TakeChallenge(ctx, "a", "c")
	require.ErrorIs(t, err, redisstore.ErrNotReplicated, "a take no replica holds is not reported done")
	require.False(t, ok)
	require.Nil(t, binding)
	ttl, err := client.PTTL(ctx, prefix+"c:{a}:c").Result()
	require.NoError(t, err)
	assert.True(t, ttl > 0 && ttl <= time.Minute, "the challenge was put back with what was left of its minute: PTTL %v", ttl)
	// Counted: the scope's quota of one is still taken.
	assert.ErrorIs(t, s.PutChallenge(ctx, "a", "other", []byte("b"), time.Minute), server.ErrStoreFull)

	_, ok, err = s.TakeChallenge(ctx, "a", "missing")
	require.NoError(t, err)
	require.False(t, ok)

	// A store that waits for no replica takes it, once.
	unwaited := redisstore.New(client, redisstore.Options{Prefix: prefix})
	binding, ok, err = unwaited.TakeChallenge(ctx, "a", "c")
	require.NoError(t, err)
	require.True(t, ok, "the challenge was put back")
	assert.Equal(t, []byte("binding"), binding)
	_, ok, err = unwaited.TakeChallenge(ctx, "a", "c")
	require.NoError(t, err)
	assert.False(t, ok)
}
