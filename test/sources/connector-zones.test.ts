/**
 * What every connector type declares about itself against what it does: its upstream's terms are
 * stated, every zone it lists (by its name, EIC code and each alias) is one its `create` accepts, and
 * every name its `create` accepts, among all the zone names Pricepoint knows, is one it lists. So
 * `GET /api/v1/sources/zones` never offers a zone a source would refuse, nor hides one it takes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONNECTOR_TYPES, createConnector } from '../../src/sources/connectors.js';
import { BIDDING_ZONES } from '../../src/sources/entsoe/zones.js';
import { sourceTermsLookup, termsOfSource } from '../../src/sources/source-terms.js';
import { SourceSettingsError } from '../../src/sources/types.js';
import { namesOf } from '../../src/sources/zone-finder.js';

/** The settings of a source of `type` filling the zone named `name`, everything else valid. */
function settingsFor(type: string, name: string): Record<string, unknown> {
  switch (type) {
    case 'entsoe':
      return { zone: name, token: 'token' };
    case 'energidataservice':
      return { area: name, currency: 'EUR' };
    case 'octopus':
      return { product: 'AGILE-24-10-01', region: name };
    default:
      return { zone: name };
  }
}

/** Whether `create` takes `name` as the zone; any refusal but of the zone's field fails the test. */
function accepts(type: string, name: string): boolean {
  try {
    createConnector(type, settingsFor(type, name));
    return true;
  } catch (error) {
    assert.ok(error instanceof SourceSettingsError, String(error));
    assert.ok(['zone', 'area', 'region'].includes(error.field), `${type} ${name}: ${error.message}`);
    return false;
  }
}

const zoned = Object.entries(CONNECTOR_TYPES).filter(([, kind]) => kind.zones !== undefined);

/** Every zone name any type lists or the ENTSO-E table knows, in the case written, plus near misses. */
const EVERY_NAME = [
  ...new Set([
    ...zoned.flatMap(([, kind]) => (kind.zones ?? []).flatMap((z) => [z.zone, z.eic ?? '', ...z.aliases])),
    ...BIDDING_ZONES.flatMap((z) => [z.name, z.eic, ...z.aliases]),
    'NO6',
    'DE-AT',
    'Denmark',
    'Norway',
    'SYS',
    'I',
    'O',
    '_Z',
  ]),
].filter((name) => name !== '');

describe('what connector types declare', () => {
  test('every type states its terms: licence, attribution, where they are published and what they say of resale', () => {
    for (const [type, kind] of Object.entries(CONNECTOR_TYPES)) {
      for (const field of ['license', 'attribution', 'redistribution'] as const) {
        assert.ok(kind.terms[field].trim().length > 0, `${type} ${field}`);
      }
      assert.match(kind.terms.termsUrl, /^https:\/\//, type);
    }
    assert.equal(CONNECTOR_TYPES['energidataservice']?.terms.license, 'CC-BY-4.0');
    assert.equal(
      CONNECTOR_TYPES['energidataservice']?.terms.attribution,
      'Source: Energinet (www.energidataservice.dk)',
    );
    assert.match(CONNECTOR_TYPES['ecb']?.terms.redistribution ?? '', /acknowledged as the source/);
    assert.match(CONNECTOR_TYPES['entsoe']?.terms.license ?? '', /ENTSO-E Transparency Platform/);
  });

  test('Energy-Charts zones outside its CC BY list carry its private-use terms', () => {
    assert.equal(termsOfSource('energycharts', { zone: 'de' })?.license, 'CC-BY-4.0');
    assert.match(
      termsOfSource('energycharts', { zone: 'NO1' })?.license ?? '',
      /private and internal use only/,
    );
    assert.equal(termsOfSource('energidataservice', { area: 'DK1' })?.license, 'CC-BY-4.0');
    assert.equal(termsOfSource('nope', {}), undefined);
  });

  test("a day's source name finds its terms: a configured source's, a type's, none for imports", () => {
    const terms = sourceTermsLookup([
      { name: 'ec-no1', type: 'energycharts', settings: { zone: 'NO1' } },
      { name: 'ec-de', type: 'energycharts', settings: { zone: 'DE-LU' } },
    ]);
    assert.match(terms('ec-no1')?.license ?? '', /private and internal use only/);
    assert.deepEqual(terms('ec-de'), {
      license: 'CC-BY-4.0',
      attribution: 'CC BY 4.0 (creativecommons.org/licenses/by/4.0) from Bundesnetzagentur | SMARD.de',
    });
    assert.equal(
      terms('entsoe')?.attribution,
      'Source: ENTSO-E Transparency Platform',
      'a run given no name',
    );
    for (const name of ['import', 'gone-source', null]) assert.equal(terms(name), undefined, String(name));
  });

  test('every type but the FX rates lists the zones it fills, each name belonging to one zone', () => {
    assert.deepEqual(
      Object.entries(CONNECTOR_TYPES)
        .filter(([, kind]) => kind.zones === undefined)
        .map(([type]) => type),
      ['ecb'],
    );
    for (const [type, kind] of zoned) {
      const seen = new Map<string, string>();
      for (const zone of kind.zones ?? []) {
        for (const name of namesOf(zone)) {
          assert.equal(seen.get(name) ?? zone.zone, zone.zone, `${type}: ${name} names two zones`);
          seen.set(name, zone.zone);
        }
      }
    }
  });

  test('each declared zone, by its name, EIC code and every alias in any letter case, is accepted by create', () => {
    for (const [type, kind] of zoned) {
      for (const zone of kind.zones ?? []) {
        for (const name of [zone.zone, ...(zone.eic === undefined ? [] : [zone.eic]), ...zone.aliases]) {
          assert.ok(accepts(type, name), `${type} refuses ${name}`);
          assert.ok(accepts(type, name.toLowerCase()), `${type} refuses ${name.toLowerCase()}`);
        }
      }
    }
  });

  test('each zone name create accepts is declared', () => {
    for (const [type, kind] of zoned) {
      const declared = new Set((kind.zones ?? []).flatMap(namesOf));
      const undeclared = EVERY_NAME.filter(
        (name) => accepts(type, name) && !declared.has(name.toUpperCase()),
      );
      assert.deepEqual(undeclared, [], `${type} accepts zones it does not list`);
    }
  });

  test('the ENTSO-E type lists every bidding zone of its table', () => {
    const entsoe = CONNECTOR_TYPES['entsoe'];
    assert.deepEqual(
      entsoe?.zones?.map((z) => [z.zone, z.eic]),
      BIDDING_ZONES.map((z) => [z.name, z.eic]),
    );
    assert.deepEqual(entsoe?.zones?.find((z) => z.zone === 'NO1')?.aliases, ['Oslo']);
  });
});
