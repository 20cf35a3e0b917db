import type { BenchRow } from './benchRow';

/** Figures with at most three significant decimals, thousands separated. */
export function figure(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** The bench table in Markdown (it reads as plain text in a terminal and pastes into docs/performance.md). */
export function formatTable(rows: BenchRow[]): string {
  const lines = [
    '| measure | value | baseline | ratio | goal | met? |',
    '|---|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.measure} | ${figure(r.value)} ${r.unit} | ${r.baselineName}: ${figure(r.baseline)} ${r.baselineUnit ?? r.unit} | ${figure(r.ratio)}×${r.spread ? ` (${figure(r.spread.min)}–${figure(r.spread.max)}, ${r.spread.pairs} pairs)` : ''} | ${r.goal} | ${r.met ? 'yes' : 'no'} |`,
    ),
  ];
  return lines.join('\n');
}
