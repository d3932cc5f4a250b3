package main

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/internal/testkit/redistest"
)

func TestRun(t *testing.T) {
	addr := redistest.Start(t)
	var out bytes.Buffer
	require.NoError(t, run(&out, addr))
	text := out.String()
	t.Log(text)

	parts := strings.Split(text, "\n[")
	require.Len(t, parts, 4, "the instances and three calls")

	confirmed := parts[1]
	assert.Regexp(t, `on instance A:\n\s+#1 delete_customer DELETE /v1/customers/cus_ada\n\s+409 confirmation_required`, confirmed)
	assert.Contains(t, confirmed, "-> confirm: confirmation challenge")
	assert.Regexp(t, `on instance B:\n\s+#2 delete_customer DELETE /v1/customers/cus_ada  X-Confirmation-Token: …\n\s+200`, confirmed)
	assert.Contains(t, confirmed, `=> 200 {"id":"cus_ada","deleted":true}`)

	spent := parts[2]
	assert.Regexp(t, `on instance A:\n\s+#1 delete_customer .*X-Confirmation-Token: …\n\s+409 confirmation_invalid`, spent)
	assert.Contains(t, spent, "=> refused: remedy: delete_customer: confirmation rejected")

	replayed := parts[3]
	assert.Regexp(t, `on instance A:\n\s+#1 charge POST /v1/charges  Idempotency-Key: (\S+)\n\s+no response: .*lost`, replayed)
	assert.Regexp(t, `on instance B:\n\s+#2 charge POST /v1/charges  Idempotency-Key: \S+\n\s+201 \(Idempotency-Replayed: true\)`, replayed)
	keys := regexp.MustCompile(`Idempotency-Key: (\S+)`).FindAllStringSubmatch(replayed, -1)
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0][1], keys[1][1], "the retry carries the same key")
	assert.Contains(t, replayed, `(replayed: true)`)

	assert.Contains(t, text, "delete_customer A ×0, B ×1: 1 in total")
	assert.Contains(t, text, "charge          A ×1, B ×0: 1 in total")

	// What the instances share is in Redis: the charge's idempotency record, done; and no
	// challenge left, since the one issued was spent.
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	records, err := rdb.Keys(ctx, prefix+"i:*").Result()
	require.NoError(t, err)
	require.Len(t, records, 1, "one idempotency record: the charge's")
	state, err := rdb.HGet(ctx, records[0], "state").Result()
	require.NoError(t, err)
	assert.Equal(t, "done", state)
	challenges, err := rdb.Keys(ctx, prefix+"c:*").Result()
	require.NoError(t, err)
	assert.Empty(t, challenges, "the challenge was spent")
}

// Without a Redis, run fails at once and says what to do.
func TestRunWithoutRedis(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now

	var out bytes.Buffer
	err = run(&out, addr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot connect to Redis at "+addr)
	assert.Contains(t, err.Error(), "pass -redis host:port")
	assert.Empty(t, out.String(), "nothing ran")
}
