/**
 * A value, or a promise of it: in-process stores answer at once, so the hot path (src/http/fast-path.ts) goes on
 * in the same turn instead of waiting for a microtask; `await` takes either.
 */
export type Maybe<T> = T | Promise<T>;

/**
 * `then(value)` now when `value` is ready, or once its promise settles.
 * @example andThen(store.peek(subject, rules, now), (d) => d.allowed)
 */
export function andThen<T, U>(value: Maybe<T>, then: (ready: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(then) : then(value);
}
