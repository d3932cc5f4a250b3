package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		return redisstore.New(client, redisstore.Options{Prefix: newPrefix(), Replicas: 1,
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
	prefix := newPrefix()
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
	prefix := newPrefix()
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
	_, _, err = redisstore.New(ring, redisstore.Options{Prefix: newPrefix(), Replicas: 1}).Claim(ctx, "a", "k", []byte("fp"), "o", time.Hour)
	require.ErrorContains(t, err, "Options.Replicas needs")
	var _ server.IdempotencyStore = s
}
