/** What src/domain/time/zone.ts asks of a tz database: a folder of TZif files, or Node's ICU. */
export interface ZoneBackend {
  /** Every name the database has (zones and links), spelt as it spells them. */
  names(): ReadonlySet<string>;
  /** Whether `name` is a name of the database, spelt exactly as it spells it. */
  isName(name: string): boolean;
  /** The zone any spelling stands for (letter case, links), or `undefined` when it is none. */
  canonicalId(name: string): string | undefined;
  /** What to suggest for a name that is not spelt as the database spells it. */
  suggestion(name: string): string | undefined;
  /** The UTC offset in minutes at `epochMs`; throws `RangeError` when `name` is no zone. */
  offsetMinutes(epochMs: number, name: string): number;
  cacheSizes(): { zones: number; spellings: number; offsetBlocks: number };
}
