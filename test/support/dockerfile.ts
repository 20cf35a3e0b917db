/**
 * A Dockerfile read as instructions (the subset this project's Dockerfile uses), so that tests check and replay what
 * the image does instead of matching its text: line continuations joined, comments dropped, JSON (exec) forms parsed.
 */
export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, ENV, CMD, ... */
  keyword: string;
  /** Everything after the keyword, continuations joined with a space. */
  args: string;
}

export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // Comment lines may sit between continued lines; they end nothing.
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full === '') continue;
    const match = /^(\S+)\s*(.*)$/.exec(full)!;
    instructions.push({ keyword: match[1].toUpperCase(), args: match[2] });
  }
  return instructions;
}

/** The one instruction of a kind the image may have (the last wins in Docker, so there must be exactly one here). */
export function only(instructions: Instruction[], keyword: string): Instruction {
  const found = instructions.filter((i) => i.keyword === keyword);
  if (found.length !== 1) throw new Error(`expected one ${keyword} in the Dockerfile, found ${found.length}`);
  return found[0];
}

/** CMD or ENTRYPOINT in exec form (a JSON array); the shell form would put /bin/sh between docker and the process. */
export function execForm(instruction: Instruction): string[] {
  const parsed: unknown = JSON.parse(instruction.args);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) {
    throw new Error(`${instruction.keyword} is not in exec form: ${instruction.args}`);
  }
  return parsed;
}

/** `ENV A=1 B=2` (the only form used here; the legacy `ENV A 1` is refused rather than misread). */
export function envPairs(instruction: Instruction): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const word of instruction.args.split(/\s+/)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new Error(`ENV in a form this reader does not know: ${instruction.args}`);
    pairs[word.slice(0, eq)] = word.slice(eq + 1).replace(/^"(.*)"$/, '$1');
  }
  return pairs;
}
