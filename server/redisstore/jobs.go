package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/server"
)

// A job of a background operation (server.Async) is a string key, Prefix+"j:{"+scope+"}:"+id,
// holding the job as JSON, counted in Prefix+"jq:{"+scope+"}" against Options.ScopeJobs: its
// script counts it as a challenge's does, so that its end replaces its running state without
// needing room, and a new job finds its scope's quota as a challenge does.

// putJobScript is putScript for a job (KEYS[1], the job ARGV[1]), which first refuses, with 2,
// to replace a job that has ended: the check and the write are one step, so that of two ends
// put at once (the handler's and a poll's past the deadline) one is kept. A stored job that
// does not decode is not replaced either: nothing can tell that it was still running.
var putJobScript = redis.NewScript(luaNow + luaSweep + luaCounted + `
local cur = redis.call('GET', KEYS[1])
if cur then
	local ok, job = pcall(cjson.decode, cur)
	if not ok or type(job) ~= 'table' or job['State'] ~= 'running' then
		return 2
	end
elseif redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) and not redis.call('ZSCORE', KEYS[2], ARGV[3]) then
	return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
counted(ARGV[3], tonumber(ARGV[2]))
return 1
`)

// PutJob implements server.JobStore: one script, which refuses to replace an ended job
// (server.ErrJobEnded), counts a new job in its scope and stores it with a TTL.
func (s *Store) PutJob(ctx context.Context, scope, id string, job server.Job, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: put job: %w", err)
	}
	b, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("redisstore: put job: %w", err)
	}
	n, err := putJobScript.Run(ctx, s.client, s.keys("j", scope, id), b, millis(ttl), id, s.scopeJobs).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: put job: %w", err)
	case n == 2:
		return fmt.Errorf("redisstore: put job: %w", server.ErrJobEnded)
	case n == 0:
		return fmt.Errorf("redisstore: put job: %w: %d jobs in one scope, its quota", server.ErrStoreFull, s.scopeJobs)
	case n != 1:
		return fmt.Errorf("redisstore: put job: the script returned %d", n)
	}
	return nil
}

// GetJob implements server.JobStore: one GET.
func (s *Store) GetJob(ctx context.Context, scope, id string) (server.Job, bool, error) {
	if err := ctx.Err(); err != nil {
		return server.Job{}, false, fmt.Errorf("redisstore: get job: %w", err)
	}
	b, err := s.client.Get(ctx, s.keys("j", scope, id)[0]).Bytes()
	if errors.Is(err, redis.Nil) {
		return server.Job{}, false, nil
	}
	if err != nil {
		return server.Job{}, false, fmt.Errorf("redisstore: get job: %w", err)
	}
	var job server.Job
	if err := json.Unmarshal(b, &job); err != nil {
		return server.Job{}, false, fmt.Errorf("redisstore: get job: a job that does not decode: %w", err)
	}
	return job, true, nil
}
