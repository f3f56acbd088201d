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
import type { LimitGate, RateLimitStore } from '../types.js';

/** How long a counter outlives its window: Redis expires by the same clock that picks the window. */
export const COUNTER_MARGIN_MS = 1000;

/**
 * ARGV: key base (`${prefix}rl:`), margin ms, then for each limit: take (1, or 0 to only read it),
 * subject, name, limit and window seconds. Units are taken from the `take` limits only when every
 * limit has one left. Returns allowed (1 or 0), then used and resetAtMs per limit.
 */
export const RATE_LIMIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local base, margin = ARGV[1], tonumber(ARGV[2])
local count = (#ARGV - 2) / 5
local keys, used, takes, resets = {}, {}, {}, {}
local allowed = 1
for i = 1, count do
  local at = 5 * i - 2
  local subject, name = ARGV[at + 1], ARGV[at + 2]
  local limit = tonumber(ARGV[at + 3])
  local length = tonumber(ARGV[at + 4]) * 1000
  local id = math.floor(now / length)
  local key = base .. ARGV[at + 4] .. ':' .. string.format('%.0f', id) .. ':' .. subject .. ':' .. name
  takes[i] = ARGV[at] == '1'
  resets[i] = (id + 1) * length
  keys[i] = key
  local value = redis.call('GET', key)
  used[i] = tonumber(value) or 0
  if value and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIREAT', key, resets[i] + margin)
  end
  if used[i] >= limit then allowed = 0 end
end
if allowed == 1 then
  for i = 1, count do
    if takes[i] then
      used[i] = redis.call('INCR', keys[i])
      redis.call('PEXPIREAT', keys[i], resets[i] + margin)
    end
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
    return this.run(subject, limits, true);
  }

  /** What is left, by Redis' clock; takes nothing (but gives an expiry to a counter without one). */
  peek(subject: string, limits: readonly LimitRule[], _nowMs: number): Promise<LimitDecision> {
    return this.run(subject, limits, false);
  }

  /** The gate and the request's limits in one script, so in one round trip. */
  async consumeBehind(
    gate: LimitGate,
    subject: string,
    limits: readonly LimitRule[],
    _nowMs: number,
  ): Promise<LimitDecision | undefined> {
    const args = argsOf(this.start(), gate.subject, gate.limits, false);
    const reply = await this.evaluate(argsOf(args, subject, limits, true));
    const all = decisionOf(reply, [...gate.limits, ...limits]);
    const shut = all.states.slice(0, gate.limits.length).some((state) => state.remaining === 0);
    return shut ? undefined : { allowed: all.allowed, states: all.states.slice(gate.limits.length) };
  }

  private async run(subject: string, limits: readonly LimitRule[], take: boolean): Promise<LimitDecision> {
    if (limits.length === 0) return { allowed: true, states: [] };
    return decisionOf(await this.evaluate(argsOf(this.start(), subject, limits, take)), limits);
  }

  /** The script's first arguments: the key base and the counters' margin. */
  private start(): (string | number)[] {
    return [`${this.prefix}rl:`, COUNTER_MARGIN_MS];
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

/** `args` with the limits of `subject` added, each to be taken or only read. */
function argsOf(
  args: (string | number)[],
  subject: string,
  limits: readonly LimitRule[],
  take: boolean,
): (string | number)[] {
  for (const rule of limits) args.push(take ? 1 : 0, subject, rule.name, rule.limit, rule.windowSeconds);
  return args;
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
