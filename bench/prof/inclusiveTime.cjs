// node inclusive.js file.cpuprofile [filterRegex] [topN]: inclusive time per function (counted once per sample stack)
const p = JSON.parse(require('fs').readFileSync(process.argv[2]));
const re = new RegExp(process.argv[3] ?? 'dist/');
const top = Number(process.argv[4] ?? 50);
const byId = new Map(p.nodes.map(n => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const key = (n) => { const cf = n.callFrame; const url = cf.url.replace(/^file:\/\//, '').replace('/work/wt-write/', ''); return `${cf.functionName || '(anon)'} ${url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`; };
const inc = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) { const d = p.timeDeltas[i] ?? 0; total += d; const seen = new Set(); let id = p.samples[i];
  while (id !== undefined) { const n = byId.get(id); const k = key(n); if (!seen.has(k) && re.test(n.callFrame.url + ' ' + n.callFrame.functionName)) { seen.add(k); inc.set(k, (inc.get(k) ?? 0) + d); } id = parent.get(id); } }
console.log(`total ${(total/1000).toFixed(0)} ms`);
[...inc].sort((a, b) => b[1] - a[1]).slice(0, top).forEach(([k, t]) => console.log((100 * t / total).toFixed(1).padStart(5) + '%', k));
