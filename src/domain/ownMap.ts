/**
 * Lookups keyed by text from outside (a request, a stored document, an event) answer from own keys only.
 *
 * Every plain object inherits `constructor`, `toString`, `valueOf`, `hasOwnProperty`, `__proto__`… from
 * Object.prototype, so `table[key]` hands back a function for those keys and `key in table` says yes: a settings key
 * `constructor` reached `rule.validate is not a function` (issue 28). A table indexed by such a key is an `OwnMap`
 * (backed by a `Map`, so no key is special), and a record that is data (a document's members, files…) is read with
 * `ownValue`/`hasOwnKey`. The lint rule `local/no-plain-object-lookup` (scripts/eslint/noPlainObjectLookup.mjs)
 * refuses `object[stringKey]` and `stringKey in object` everywhere else in src/.
 */
export class OwnMap<K extends string, V> {
  readonly #entries: ReadonlyMap<string, V>;

  /** Built from a literal table: `new OwnMap({ text: textSearches, prefix: prefixSearches })`. */
  constructor(table: Readonly<Record<K, V>>) {
    this.#entries = new Map<string, V>(Object.entries(table) as [K, V][]);
  }

  /** The value of an own key of the table, undefined for any other text (`constructor` included). */
  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Whether the text is one of the table's keys; narrows it to the key type. */
  has(key: string): key is K {
    return this.#entries.has(key);
  }

  /** The table's keys, in the order of the literal (for messages that list what is allowed). */
  keys(): K[] {
    return [...this.#entries.keys()] as K[];
  }
}

/** Whether `key` is an own property of a record that is data (`Object.hasOwn`, never the prototype chain). */
export function hasOwnKey(record: object, key: string): boolean {
  return Object.hasOwn(record, key);
}

/** The value of an own property of a record that is data, undefined for anything else (`constructor` included). */
export function ownValue<V>(record: Readonly<Partial<Record<string, V>>>, key: string): V | undefined {
  // eslint-disable-next-line local/no-plain-object-lookup -- the one read guarded by Object.hasOwn
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
