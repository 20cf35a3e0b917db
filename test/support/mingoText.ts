/**
 * `$text` for the MongoDB stand-in (test/support/mongoStandIn.ts): an approximation of MongoDB's English text
 * search, written to behave like the server on what the read-model adapter sends. It is NOT MongoDB's
 * implementation; the documented differences are:
 *
 *  - Stemming uses the original Porter (1980) algorithm; MongoDB uses Snowball's English ("Porter2") stemmer. The two
 *    agree on common inflections (running → run, oats → oat) and differ on some rarer words.
 *  - Stop words are a standard English list close to, but not byte-for-byte, MongoDB's `stop_words_english.txt`.
 *  - Case and diacritics are folded by Unicode NFD decomposition and dropping combining marks (MongoDB's text index
 *    version 3 folds with its own Unicode tables: the same result for Latin scripts).
 *  - Phrases match as case- and diacritic-insensitive substrings of one indexed field (MongoDB matches phrases
 *    against the field's text in the same way, after the index narrowed the candidates by the phrase's terms).
 *  - The score follows the shape of MongoDB's formula (per field: weight × Σ over matching terms of
 *    frequency × (0.5 × frequency / tokens + 0.5)), without its exact-match bonus; only the order of scores within a
 *    query is meaningful, as on the server.
 *  - `$language`, `$caseSensitive` and `$diacriticSensitive` are not supported (the adapter never sends them).
 */

const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can cannot could did do does doing down during each few for from further had has have having he her here hers herself ' +
    'him himself his how i if in into is it its itself me more most my myself no nor not of off on once only or other ought ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why with ' +
    'would you your yours yourself yourselves'
  ).split(' '),
);

/** Lower-cases and strips diacritics (NFD, then combining marks dropped). */
export function foldText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Words of a text as MongoDB's tokenizer sees them: runs of letters, digits and underscores, folded. */
export function words(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** Index terms of a text: words without stop words, stemmed. */
export function terms(text: string): string[] {
  return words(text)
    .filter((w) => !STOP_WORDS.has(w))
    .map(stem);
}

// ---- Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980) ----

const STEP2: Record<string, string> = {
  ational: 'ate',
  tional: 'tion',
  enci: 'ence',
  anci: 'ance',
  izer: 'ize',
  bli: 'ble',
  alli: 'al',
  entli: 'ent',
  eli: 'e',
  ousli: 'ous',
  ization: 'ize',
  ation: 'ate',
  ator: 'ate',
  alism: 'al',
  iveness: 'ive',
  fulness: 'ful',
  ousness: 'ous',
  aliti: 'al',
  iviti: 'ive',
  biliti: 'ble',
  logi: 'log',
};
const STEP3: Record<string, string> = {
  icate: 'ic',
  ative: '',
  alize: 'al',
  iciti: 'ic',
  ical: 'ic',
  ful: '',
  ness: '',
};

const c = '[^aeiou]';
const v = '[aeiouy]';
const C = `${c}[^aeiouy]*`;
const V = `${v}[aeiou]*`;
const MGR0 = new RegExp(`^(${C})?${V}${C}`); // measure > 0
const MEQ1 = new RegExp(`^(${C})?${V}${C}(${V})?$`); // measure = 1
const MGR1 = new RegExp(`^(${C})?${V}${C}${V}${C}`); // measure > 1
const S_V = new RegExp(`^(${C})?${v}`); // the stem holds a vowel
const CVC = new RegExp(`^${C}${v}[^aeiouwxy]$`);

/** Stems one folded word; words that are not plain a–z (digits, other scripts) are returned as they are. */
export function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  const initialY = w.startsWith('y');
  if (initialY) w = 'Y' + w.slice(1);
  let m: RegExpExecArray | null;

  // Step 1a
  if ((m = /^(.+?)(ss|i)es$/.exec(w))) w = m[1] + m[2];
  else if ((m = /^(.+?)([^s])s$/.exec(w))) w = m[1] + m[2];

  // Step 1b
  if ((m = /^(.+?)eed$/.exec(w))) {
    if (MGR0.test(m[1])) w = w.slice(0, -1);
  } else if ((m = /^(.+?)(ed|ing)$/.exec(w))) {
    const stemPart = m[1];
    if (S_V.test(stemPart)) {
      w = stemPart;
      if (/(at|bl|iz)$/.test(w)) w += 'e';
      else if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
      else if (CVC.test(w)) w += 'e';
    }
  }

  // Step 1c
  if ((m = /^(.+?)y$/.exec(w)) && S_V.test(m[1])) w = m[1] + 'i';

  // Step 2
  if (
    (m =
      /^(.+?)(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$/.exec(
        w,
      ))
  ) {
    if (MGR0.test(m[1])) w = m[1] + STEP2[m[2]];
  }

  // Step 3
  if ((m = /^(.+?)(icate|ative|alize|iciti|ical|ful|ness)$/.exec(w))) {
    if (MGR0.test(m[1])) w = m[1] + STEP3[m[2]];
  }

  // Step 4
  if ((m = /^(.+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)$/.exec(w))) {
    if (MGR1.test(m[1])) w = m[1];
  } else if ((m = /^(.+?)(s|t)(ion)$/.exec(w))) {
    if (MGR1.test(m[1] + m[2])) w = m[1] + m[2];
  }

  // Step 5
  if ((m = /^(.+?)e$/.exec(w))) {
    const s = m[1];
    if (MGR1.test(s) || (MEQ1.test(s) && !CVC.test(s))) w = s;
  }
  if (w.endsWith('ll') && MGR1.test(w)) w = w.slice(0, -1);

  if (initialY) w = 'y' + w.slice(1);
  return w;
}

// ---- $search strings ----

export interface TextQuery {
  /** Stemmed positive terms (any of them matches when there is no phrase). */
  terms: string[];
  /** Stemmed negated terms (a document holding one never matches). */
  negated: string[];
  /** Folded phrases (every one must appear in one field). */
  phrases: string[];
}

/**
 * Parses a `$search` string as MongoDB does: `"…"` delimits a phrase (an unterminated quote runs to the end), a word
 * prefixed with `-` is negated, other words are terms; stop words are dropped and words stemmed.
 */
export function parseSearch(search: string): TextQuery {
  const phrases: string[] = [];
  const positive: string[] = [];
  const negated: string[] = [];
  let rest = '';
  let i = 0;
  while (i < search.length) {
    if (search[i] === '"') {
      const end = search.indexOf('"', i + 1);
      const phrase = end === -1 ? search.slice(i + 1) : search.slice(i + 1, end);
      if (phrase.trim()) {
        phrases.push(foldText(phrase.trim()));
        // A phrase's words also count as terms (they narrow the candidates and add to the score).
        rest += ` ${phrase} `;
      }
      i = end === -1 ? search.length : end + 1;
    } else {
      rest += search[i];
      i++;
    }
  }
  for (const token of rest.split(/\s+/).filter(Boolean)) {
    const target = token.startsWith('-') ? negated : positive;
    for (const word of words(token)) if (!STOP_WORDS.has(word)) target.push(stem(word));
  }
  return { terms: [...new Set(positive)], negated: [...new Set(negated)], phrases };
}

/** The text-indexed fields of a collection and their weights. */
export type TextWeights = Record<string, number>;

/** Reads a dotted path; arrays of strings contribute every element. */
function fieldTexts(doc: Record<string, unknown>, path: string): string[] {
  let values: unknown[] = [doc];
  for (const part of path.split('.')) {
    const next: unknown[] = [];
    for (const value of values) {
      if (Array.isArray(value)) {
        for (const element of value)
          if (element && typeof element === 'object') next.push((element as Record<string, unknown>)[part]);
      } else if (value && typeof value === 'object') next.push((value as Record<string, unknown>)[part]);
    }
    values = next;
  }
  const out: string[] = [];
  for (const value of values) {
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (const element of value) if (typeof element === 'string') out.push(element);
  }
  return out;
}

/**
 * The text score of a document for a query, or null when it does not match: every phrase must appear in one
 * field, no negated term may appear, and (without phrases) at least one term must.
 */
export function textScore(doc: Record<string, unknown>, weights: TextWeights, query: TextQuery): number | null {
  if (query.terms.length === 0 && query.phrases.length === 0) return null;
  const fields = Object.entries(weights).flatMap(([path, weight]) =>
    fieldTexts(doc, path).map((text) => ({ text, weight })),
  );
  const tokenized = fields.map((f) => ({ ...f, terms: terms(f.text), folded: foldText(f.text) }));
  for (const field of tokenized) if (query.negated.some((t) => field.terms.includes(t))) return null;
  for (const phrase of query.phrases) if (!tokenized.some((f) => f.folded.includes(phrase))) return null;
  let score = 0;
  for (const field of tokenized) {
    if (field.terms.length === 0) continue;
    for (const term of query.terms) {
      const frequency = field.terms.filter((t) => t === term).length;
      if (frequency > 0) score += field.weight * frequency * (0.5 * (frequency / field.terms.length) + 0.5);
    }
  }
  if (query.phrases.length === 0 && score === 0) return null;
  return score;
}
