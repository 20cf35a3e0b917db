// Loaded with -r by bench/prof/profile.ts: prints the event-loop delay of the process when it gets SIGINT.
const { monitorEventLoopDelay } = require('perf_hooks');
const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
const report = () => { console.error(`[eld] mean ${(h.mean/1e6).toFixed(2)} ms p50 ${(h.percentile(50)/1e6).toFixed(2)} p99 ${(h.percentile(99)/1e6).toFixed(2)} max ${(h.max/1e6).toFixed(2)}`); };
process.on('SIGINT', () => { report(); process.exit(0); });
