/**
 * Points the in-process time code at one tz folder, as `PRICEPOINT_TZDIR` does for the server, so a
 * test never depends on what the machine has installed.
 */
import assert from 'node:assert/strict';
import { useTzSource } from '../../src/domain/time/zone.js';

export function usePinnedTzdata(dir: string): void {
  const chosen = useTzSource({ setting: dir, systemDir: dir });
  assert.equal(chosen.source, 'setting');
  assert.equal(chosen.path, dir);
}
