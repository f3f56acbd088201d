/**
 * Fixed-window counters in Redis, shared by every instance (DESIGN sections 4 and 7).
 *
 * One Lua script per request checks and takes a unit from every limit of the tier, so all-or-nothing
 * holds across instances: Redis runs a script without interleaving any other command. The window
 * comes from Redis' own clock (`TIME` inside the script), so instances whose clocks disagree still
 * count into the same window, and `resetAtMs` is Redis time too. The arithmetic is the one of
 * `windowOf` (windows aligned to the Unix epoch), so a counter here and in `MemoryRateLimitStore`
 * agree for the same sequence of requests.
 *
 * Keys: `${prefix}rl:${windowSeconds}:${windowId}:${subject}:${limitName}`. Subjects hold key ids and
 * client addresses, never an API key. Every counter carries an expiry at its window's end (plus a
 * margin); a counter found without one (a crash between INCR and PEXPIREAT in an older writer, a
 * PERSIST by hand) gets one on the next read, so nothing outlives its window for good.
 *
 * The script builds its keys from Redis time, so it cannot declare them in KEYS: fine on a single
 * Redis or a primary with replicas (Redis 7 replicates the script's effects), not on Redis Cluster.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LimitDecision, LimitState } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import type { RateLimitStore } from '../types.js';

/** How long a counter outlives its window: Redis expires by the same clock that picks the window. */
export const COUNTER_MARGIN_MS = 1000;

/**
 * ARGV: key base (`${prefix}rl:`), subject, mode (`consume` | `peek`), margin ms, then name, limit
 * and window seconds for each limit. Returns allowed (1 or 0), then used and resetAtMs per limit.
 */
export const RATE_LIMIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local base, subject, mode, margin = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local count = (#ARGV - 4) / 3
local keys, used, limits, resets = {}, {}, {}, {}
local allowed = 1
for i = 1, count do
  local name = ARGV[2 + 3 * i]
  local limit = tonumber(ARGV[3 + 3 * i])
  local length = tonumber(ARGV[4 + 3 * i]) * 1000
  local id = math.floor(now / length)
  local key = base .. ARGV[4 + 3 * i] .. ':' .. string.format('%.0f', id) .. ':' .. subject .. ':' .. name
  resets[i] = (id + 1) * length
  keys[i] = key
  limits[i] = limit
  local value = redis.call('GET', key)
  used[i] = tonumber(value) or 0
  if value and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIREAT', key, resets[i] + margin)
  end
  if used[i] >= limit then allowed = 0 end
end
if mode == 'consume' and allowed == 1 then
  for i = 1, count do
    used[i] = redis.call('INCR', keys[i])
    redis.call('PEXPIREAT', keys[i], resets[i] + margin)
  end
end
local reply = { allowed }
for i = 1, count do
  reply[2 * i] = used[i]
  reply[2 * i + 1] = resets[i]
end
return reply
`;

const SCRIPT_SHA = createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex');

export class RedisRateLimitStore implements RateLimitStore {
  /**
   * @example new RedisRateLimitStore(new Redis(url, redisCommandOptions), 'pp:')
   * The client should fail fast (see `redisCommandOptions` in `./index.ts`): a request waits on it.
   */
  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {}

  /** The app clock `_nowMs` is not used: the window and the reset time come from Redis' clock. */
  consume(subject: string, limits: readonly LimitRule[], _nowMs: number): Promise<LimitDecision> {
    return this.run('consume', subject, limits);
  }

  /** What is left, by Redis' clock; takes nothing (but gives an expiry to a counter without one). */
  peek(subject: string, limits: readonly LimitRule[], _nowMs: number): Promise<LimitDecision> {
    return this.run('peek', subject, limits);
  }

  private async run(mode: 'consume' | 'peek', subject: string, limits: readonly LimitRule[]) {
    if (limits.length === 0) return { allowed: true, states: [] };
    const args: (string | number)[] = [`${this.prefix}rl:`, subject, mode, COUNTER_MARGIN_MS];
    for (const rule of limits) args.push(rule.name, rule.limit, rule.windowSeconds);
    const reply = await this.evaluate(args);
    return decisionOf(reply, limits);
  }

  /** EVALSHA first (the script is sent once per Redis start), EVAL when Redis does not know it. */
  private async evaluate(args: (string | number)[]): Promise<unknown> {
    try {
      return await this.client.evalsha(SCRIPT_SHA, 0, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await this.client.eval(RATE_LIMIT_SCRIPT, 0, ...args);
    }
  }
}

function decisionOf(reply: unknown, limits: readonly LimitRule[]): LimitDecision {
  if (!Array.isArray(reply) || reply.length !== 1 + 2 * limits.length) {
    throw new Error('rate-limit script returned an unexpected reply');
  }
  const states: LimitState[] = limits.map((rule, i) => {
    const used = Number(reply[1 + 2 * i]);
    const resetAtMs = Number(reply[2 + 2 * i]);
    return { rule, remaining: Math.max(0, rule.limit - used), resetAtMs };
  });
  return { allowed: Number(reply[0]) === 1, states };
}
