/**
 * Every IANA zone, every offset transition from 2020 to 2030, checked against a reference that
 * shares nothing with days.ts (test/time/transition-reference.ts), and random days and instants.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  dayProblems,
  offsetAt,
  PERIOD_END,
  PERIOD_START,
  referenceOffset,
  type Timeline,
  type Transition,
  timeline,
} from '../../../test/time/transition-reference.js';
import {
  addDays,
  dayBounds,
  dayIntervals,
  daysBetween,
  formatInstant,
  intervalEnd,
  isOnGrid,
  localDate,
  RESOLUTIONS,
  type Resolution,
} from './days.js';
import { SHIPPED_TZDIR } from './tz-source.js';
import { offsetMinutes, timeZoneId, timeZoneNames, useTzSource } from './zone.js';

// Days are checked against the pinned tz release shipped in tzdata/, whatever the machine has.
useTzSource({ setting: SHIPPED_TZDIR, systemDir: SHIPPED_TZDIR });
/** Every zone of that release, once (links lead to these). */
const ZONES = [...new Set([...timeZoneNames()].map((name) => timeZoneId(name) ?? name))];

const MINUTE = 60_000;
const QUARTER_HOUR = 15 * MINUTE;
const ALL_RESOLUTIONS = Object.keys(RESOLUTIONS) as Resolution[];

describe('every IANA zone, every offset transition from 2020 to 2030', () => {
  const zones = ZONES;
  let lines: Timeline[] = [];
  const inPeriod = (t: Transition): boolean => t.at >= PERIOD_START && t.at < PERIOD_END;

  test('the reference finds the transitions of the zones that change clocks', () => {
    lines = zones.map(timeline);
    const count = (zone: string): number =>
      lines.find((l) => l.zone === zone)?.transitions.filter(inPeriod).length ?? -1;
    assert.equal(count('Europe/Oslo'), 22);
    assert.equal(count('America/New_York'), 22);
    assert.equal(count('Asia/Tokyo'), 0);
    assert.ok(lines.flatMap((l) => l.transitions).length > 2000);
  });

  test('the reference knows the offset at random instants as the zone file does (no transition was missed)', () => {
    fc.assert(
      fc.property(
        fc.nat(lines.length - 1),
        fc.integer({ min: PERIOD_START, max: PERIOD_END - 1 }),
        (i, t) => {
          const line = lines[i];
          assert.ok(line !== undefined);
          assert.equal(offsetAt(line, t), referenceOffset(t, line.zone), line.zone);
        },
      ),
      { numRuns: 5000 },
    );
  });

  test('offsetMinutes (its table of offsets to 2200) equals the zone file at, before and after each transition', () => {
    const problems: string[] = [];
    for (const { zone, at: t, before, after } of lines.flatMap((l) => l.transitions.filter(inPeriod))) {
      const probes: [number, number][] = [
        [t + 1000, after],
        [t, after],
        [t - 1000, before],
      ];
      for (const [instant, want] of probes) {
        const cached = offsetMinutes(instant, zone);
        if (cached !== want) {
          problems.push(
            `${zone} ${new Date(instant).toISOString()}: offsetMinutes ${cached}, expected ${want}`,
          );
        }
      }
    }
    assert.deepEqual(problems.slice(0, 20), []);
  });

  test('the days around each transition, and one ordinary day per zone, have a contiguous grid on local time', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const line of lines) {
      const dates = new Set(['2026-01-15']);
      for (const { at: t, before, after } of line.transitions.filter(inPeriod)) {
        const oldDate = new Date(t - 1000 + before * MINUTE).toISOString().slice(0, 10);
        const newDate = new Date(t + after * MINUTE).toISOString().slice(0, 10);
        for (const date of [addDays(oldDate, -1), oldDate, newDate, addDays(newDate, 1)]) dates.add(date);
      }
      for (const date of dates) {
        problems.push(...dayProblems(line, date));
        checked++;
      }
    }
    assert.ok(checked > 8000, `${checked} days`);
    assert.deepEqual(problems.slice(0, 20), []);
  });
});

describe('random days and instants (fast-check)', () => {
  const zones = ZONES;
  const dates = fc
    .integer({ min: 0, max: daysBetween('2020-01-01', '2030-12-31') })
    .map((n) => addDays('2020-01-01', n));

  test('a day starts on its own date, ends on the next and meets the next day', () => {
    fc.assert(
      fc.property(fc.constantFrom(...zones), dates, (zone, date) => {
        const { start, end } = dayBounds(date, zone);
        assert.equal(localDate(start, zone), date);
        assert.equal(localDate(end - 1, zone), date);
        assert.equal(localDate(end, zone), addDays(date, 1));
        assert.equal(dayBounds(addDays(date, 1), zone).start, end);
      }),
      { numRuns: 1000 },
    );
  });

  test('isOnGrid is true exactly for the starts of the day, and intervalEnd agrees with dayIntervals', () => {
    const instants = fc.tuple(
      fc.integer({ min: PERIOD_START / QUARTER_HOUR, max: PERIOD_END / QUARTER_HOUR - 1 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: QUARTER_HOUR - 1 })),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        instants,
        fc.constantFrom(...ALL_RESOLUTIONS),
        (zone, [q, ms], res) => {
          const t = q * QUARTER_HOUR + ms;
          const spans = dayIntervals(localDate(t, zone), zone, res);
          const span = spans.find((s) => s.start === t);
          assert.equal(isOnGrid(t, zone, res), span !== undefined);
          if (span !== undefined) assert.equal(intervalEnd(t, zone, res), span.end);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('formatInstant of any instant parses back to it, to the second', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: PERIOD_START, max: PERIOD_END - 1 }),
        (zone, t) => {
          assert.equal(Date.parse(formatInstant(t, zone)), Math.floor(t / 1000) * 1000);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
