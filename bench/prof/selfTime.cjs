// node summarize.js file.cpuprofile [topN]: self time by function and by file/package
const p = JSON.parse(require('fs').readFileSync(process.argv[2]));
const top = Number(process.argv[3] ?? 40);
const byId = new Map(p.nodes.map(n => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
for (let i = 0; i < p.samples.length; i++) { const id = p.samples[i]; self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; }
const fn = new Map(), file = new Map();
for (const [id, t] of self) { const n = byId.get(id); const cf = n.callFrame; const url = cf.url.replace(/^file:\/\//, '').replace('/work/wt-write/', '');
  const k = `${cf.functionName || '(anon)'} ${url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`; fn.set(k, (fn.get(k) ?? 0) + t);
  const pkg = url.includes('node_modules/') ? 'nm:' + url.split('node_modules/').pop().split('/').slice(0, url.split('node_modules/').pop().startsWith('@') ? 2 : 1).join('/') : url.startsWith('node:') ? url : url ? url : cf.functionName; file.set(pkg, (file.get(pkg) ?? 0) + t); }
const pr = (m, title) => { console.log(`--- ${title} (total ${(total/1000).toFixed(0)} ms)`); [...m].sort((a, b) => b[1] - a[1]).slice(0, top).forEach(([k, t]) => console.log((100 * t / total).toFixed(1).padStart(5) + '%', k)); };
pr(fn, 'self by function'); pr(file, 'self by file/package');
