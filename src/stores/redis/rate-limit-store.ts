/**
 * Fixed-window counters in Redis, shared by every instance (docs/keys-and-tiers.md, docs/scale-out.md).
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
import { checkCost, type LimitDecision, type LimitState, unitsOf } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import type { LimitGate, RateLimitStore } from '../types.js';

/** How long a counter outlives its window: Redis expires by the same clock that picks the window. */
export const COUNTER_MARGIN_MS = 1000;

/**
 * ARGV: key base (`${prefix}rl:`), margin ms, then one request after another: the number of its
 * limits, then for each limit: take (the units to take, or -1 to only read it), subject, name, limit
 * and window seconds. A limit to take from needs `take` units left (worked out by the caller:
 * `unitsOf`), one only read needs one. A request's units are taken only when every one of its
 * limits has what it needs. Requests are decided in their order, each seeing what the ones before
 * it took, exactly as if each had its own script call. Returns, request after request: allowed (1
 * or 0), then used and resetAtMs per limit. A counter taken from gets its expiry anew; only one that
 * is left alone is asked for its own (PTTL), so an allowed request costs Redis three commands per
 * limit, not four.
 */
export const RATE_LIMIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local base, margin = ARGV[1], tonumber(ARGV[2])
local reply = {}
local at = 3
while at <= #ARGV do
  local count = tonumber(ARGV[at])
  at = at + 1
  local keys, used, takes, resets = {}, {}, {}, {}
  local allowed = 1
  for i = 1, count do
    local take, limit = tonumber(ARGV[at]), tonumber(ARGV[at + 3])
    local length = tonumber(ARGV[at + 4]) * 1000
    local id = math.floor(now / length)
    local key = base .. ARGV[at + 4] .. ':' .. string.format('%.0f', id) .. ':' .. ARGV[at + 1] .. ':' .. ARGV[at + 2]
    takes[i] = take
    resets[i] = (id + 1) * length
    keys[i] = key
    used[i] = tonumber(redis.call('GET', key))
    local need = take
    if need < 0 then need = 1 end
    if (used[i] or 0) + need > limit then allowed = 0 end
    at = at + 5
  end
  for i = 1, count do
    if allowed == 1 and takes[i] > 0 then
      used[i] = redis.call('INCRBY', keys[i], takes[i])
      redis.call('PEXPIREAT', keys[i], resets[i] + margin)
    elseif used[i] and redis.call('PTTL', keys[i]) == -1 then
      redis.call('PEXPIREAT', keys[i], resets[i] + margin)
    end
  end
  reply[#reply + 1] = allowed
  for i = 1, count do
    reply[#reply + 1] = used[i] or 0
    reply[#reply + 1] = resets[i]
  end
end
return reply
`;

/**
 * ARGV: key base, then for each limit: subject, name, window seconds, window id and the units to give
 * back. A counter is lowered only while it exists (its window has not expired) and never below zero;
 * it keeps its expiry.
 */
export const GIVE_BACK_SCRIPT = `
local base = ARGV[1]
for at = 2, #ARGV, 5 do
  local key = base .. ARGV[at + 2] .. ':' .. ARGV[at + 3] .. ':' .. ARGV[at] .. ':' .. ARGV[at + 1]
  local used = tonumber(redis.call('GET', key))
  if used then
    redis.call('DECRBY', key, math.min(used, tonumber(ARGV[at + 4])))
  end
end
return 1
`;

/** The script's `take` of a limit that is only read (a peek, a gate): it needs one unit left. */
const READ_ONLY = 'read';

const SCRIPT_SHA = createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex');
const GIVE_BACK_SHA = createHash('sha1').update(GIVE_BACK_SCRIPT).digest('hex');

/** Requests sent in one script call at most: its arguments stay a few thousand. */
const MAX_BATCH = 256;

/** One request's arguments to the script: its number of limits, then five arguments per limit. */
type Segment = [number, ...(string | number)[]];

/** A request waiting for the script call of its turn: its arguments, and where its reply goes. */
interface Queued {
  readonly segment: Segment;
  /** Numbers the reply holds for it: allowed, then used and resetAtMs per limit. */
  readonly replyLength: number;
  resolve(reply: unknown[]): void;
  reject(error: unknown): void;
}

export class RedisRateLimitStore implements RateLimitStore {
  /** Requests of this turn of the event loop, sent together in one script call when it ends. */
  private queue: Queued[] = [];

  /**
   * @example new RedisRateLimitStore(new Redis(url, redisCommandOptions), 'pp:')
   * The client should fail fast (see `redisCommandOptions` in `./index.ts`): a request waits on it.
   */
  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {}

  /** The app clock `_nowMs` is not used: the window and the reset time come from Redis' clock. */
  consume(subject: string, limits: readonly LimitRule[], _nowMs: number, cost = 1): Promise<LimitDecision> {
    checkCost(cost);
    return this.run(subject, limits, cost);
  }

  /** To the windows of `taken` (by their reset time), whatever Redis' clock says now. */
  async giveBack(subject: string, taken: LimitDecision, cost = 1): Promise<void> {
    checkCost(cost);
    if (!taken.allowed || taken.states.length === 0) return;
    const args: (string | number)[] = [`${this.prefix}rl:`];
    for (const { rule, resetAtMs } of taken.states) {
      const id = resetAtMs / (rule.windowSeconds * 1000) - 1;
      args.push(subject, rule.name, rule.windowSeconds, String(id), unitsOf(rule, cost));
    }
    await this.evaluate(GIVE_BACK_SCRIPT, GIVE_BACK_SHA, args);
  }

  /** What is left, by Redis' clock; takes nothing (but gives an expiry to a counter without one). */
  peek(subject: string, limits: readonly LimitRule[], _nowMs: number): Promise<LimitDecision> {
    return this.run(subject, limits, READ_ONLY);
  }

  /** The gate and the request's limits in one request of the script, so in one round trip. */
  async consumeWithin(
    gate: LimitGate,
    subject: string,
    limits: readonly LimitRule[],
    _nowMs: number,
    cost = 1,
  ): Promise<LimitDecision | undefined> {
    checkCost(cost);
    const all = [...gate.limits, ...limits];
    const segment = argsOf(
      argsOf<Segment>([all.length], gate.subject, gate.limits, READ_ONLY),
      subject,
      limits,
      cost,
    );
    const decision = decisionOf(await this.queued(segment), all);
    const shut = decision.states.slice(0, gate.limits.length).some((state) => state.remaining === 0);
    return shut
      ? undefined
      : { allowed: decision.allowed, states: decision.states.slice(gate.limits.length) };
  }

  /** A request of `cost` units from every limit, or only a read of them. */
  private async run(
    subject: string,
    limits: readonly LimitRule[],
    cost: number | typeof READ_ONLY,
  ): Promise<LimitDecision> {
    if (limits.length === 0) return { allowed: true, states: [] };
    const segment = argsOf<Segment>([limits.length], subject, limits, cost);
    return decisionOf(await this.queued(segment), limits);
  }

  /**
   * The script's reply to one request. Requests made in the same turn of the event loop go to Redis
   * in one script call when the turn ends, as ioredis' own pipelining would send their commands in
   * one write, but with one command for Redis and for the client to handle instead of one per
   * request (bench/README.md).
   */
  private queued(segment: Segment): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ segment, replyLength: 1 + 2 * segment[0], resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.send());
      else if (this.queue.length === MAX_BATCH) this.send();
    });
  }

  /** Sends the requests queued in this turn; each gets its part of the reply, or the error. */
  private async send(): Promise<void> {
    const batch = this.queue;
    if (batch.length === 0) return; // sent already, full, within its turn
    this.queue = [];
    const args: (string | number)[] = [`${this.prefix}rl:`, COUNTER_MARGIN_MS];
    let expected = 0;
    for (const queued of batch) {
      for (const arg of queued.segment) args.push(arg);
      expected += queued.replyLength;
    }
    let reply: unknown;
    try {
      reply = await this.evaluate(RATE_LIMIT_SCRIPT, SCRIPT_SHA, args);
      if (!Array.isArray(reply) || reply.length !== expected) {
        throw new Error('rate-limit script returned an unexpected reply');
      }
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    let at = 0;
    for (const queued of batch) {
      queued.resolve(reply.slice(at, at + queued.replyLength));
      at += queued.replyLength;
    }
  }

  /** EVALSHA first (the script is sent once per Redis start), EVAL when Redis does not know it. */
  private async evaluate(script: string, sha: string, args: (string | number)[]): Promise<unknown> {
    try {
      return await this.client.evalsha(sha, 0, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await this.client.eval(script, 0, ...args);
    }
  }
}

/** `args` with the limits of `subject` added, each to take what a request of `cost` still takes, or only to be read. */
function argsOf<Args extends (string | number)[]>(
  args: Args,
  subject: string,
  limits: readonly LimitRule[],
  cost: number | typeof READ_ONLY,
): Args {
  for (const rule of limits) {
    const take = cost === READ_ONLY ? -1 : unitsOf(rule, cost);
    args.push(take, subject, rule.name, rule.limit, rule.windowSeconds);
  }
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
