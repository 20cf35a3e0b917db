import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SseClient } from '../support/sseClient';
import { kill9, runCli, startService, stopGracefully, type ServiceProcess } from './serviceProcess';

/**
 * The multi-process chaos run (issue 13) on the embedded default: `processes` service processes on one DATA_DIR
 * (127.0.0.1, free ports), a client spreading a mixed workload (creates, moves, metadata, uploads, copies, deletes)
 * over them round-robin, an SSE subscriber (`GET /events`) per process, and `kill -9` of a random process (the lease
 * holder every other time) every `killEveryMs`, restarted after a moment. Bounded by `seconds` and `maxKills`.
 *
 * At the end, with every process back and idle: each acknowledged write is in the log; the read models are at the
 * head of the log and `verify` finds them equal to a replay; each subscriber's ids (resumed with Last-Event-ID after
 * its process died) are exactly the log's positions since it started; after a restart (the startup sweep) every blob
 * a file references exists and no unreferenced blob is older than the grace period.
 *
 *   npm run chaos                         # the long run: 300 s (CHAOS_SECONDS, CHAOS_MAX_KILLS to change)
 *   npx jest test/chaos                   # the short run the suite includes (~35 s of chaos)
 */

export interface ChaosOptions {
  seconds: number;
  maxKills: number;
  processes?: number;
  killEveryMs?: number;
  /** Concurrent client loops. */
  clients?: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  requests: number;
  acknowledged: number;
  kills: number;
  holderKills: number;
  takeovers: number;
  eventsChecked: number;
  blobsChecked: number;
  /** Everything that did not hold; empty when the run passed. */
  failures: string[];
  summary: string;
}

/** What an acknowledged write must have left in the log: an event of this type on this stream, matching `data`. */
interface Expectation {
  what: string;
  streamId: string;
  /** The event type, or types any of which will do. */
  type: string | string[];
  matches: (data: any) => boolean;
}

const GRACE_SECONDS = 4;
const PAYLOADS = Array.from({ length: 6 }, (_, i) => Buffer.from(`chaos payload ${i} `.repeat(50 + i * 20)));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)];

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const count = options.processes ?? 3;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-chaos-'));
  const env = {
    PROJECTOR_LEASE_TTL_MS: '1500',
    BLOB_RETENTION_DAYS: '0',
    BLOB_SWEEP_GRACE_SECONDS: String(GRACE_SECONDS),
  };
  const slots: (ServiceProcess | null)[] = [];
  const failures: string[] = [];
  const expectations: Expectation[] = [];
  const stats = { requests: 0, kills: 0, holderKills: 0 };
  const subscribers: { connections: SseClient[]; ids: string[]; slot: number }[] = [];
  /** Subscribers reconnect while this holds (until the checks are done). */
  let subscribing = true;

  const live = () => slots.filter((s): s is ServiceProcess => s !== null && !s.dead);
  const sqlite = () =>
    new Database(path.join(dataDir, 'folder-service.sqlite'), { readonly: true, fileMustExist: true });
  const leaseRow = () => {
    const db = sqlite();
    try {
      return db.prepare("SELECT holder, epoch FROM ops_leases WHERE name = 'projector:read-models'").get() as
        { holder: string; epoch: number } | undefined;
    } finally {
      db.close();
    }
  };

  try {
    for (let i = 0; i < count; i++) slots.push(await startService(dataDir, env));
    let turn = 0;
    /** One request to the next live process (round robin); null when it did not answer (a process died). */
    const call = async (
      method: string,
      target: string,
      init: { token?: string; form?: Record<string, string>; json?: unknown; body?: Buffer } = {},
    ) => {
      const alive = live();
      if (alive.length === 0) return null;
      const service = alive[turn++ % alive.length];
      stats.requests += 1;
      const headers: Record<string, string> = {};
      if (init.token) headers['Girder-Token'] = init.token;
      let body: string | Uint8Array | undefined;
      if (init.form) {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(init.form).toString();
      } else if (init.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(init.json);
      } else if (init.body) {
        headers['Content-Type'] = 'application/octet-stream';
        body = init.body;
      }
      try {
        const res = await fetch(`${service.api}${target}`, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      } catch {
        return null;
      }
    };

    // Set-up, retried until a process answers (nothing is being killed yet).
    const admin = await call('POST', '/user', {
      form: { login: 'admin', email: 'admin@example.com', firstName: 'A', lastName: 'D', password: 'password1' },
    });
    if (admin?.status !== 200) throw new Error(`could not create the admin: ${JSON.stringify(admin)}`);
    const token: string = admin.body.authToken.token;
    const root = await call('POST', '/folder', {
      token,
      form: { parentType: 'user', parentId: admin.body._id, name: 'chaos' },
    });
    if (root?.status !== 200) throw new Error(`could not create the root folder: ${JSON.stringify(root)}`);
    const folders: string[] = [root.body._id];
    const startPosition = (() => {
      const db = sqlite();
      try {
        return (db.prepare('SELECT MAX(position) AS p FROM es_events').get() as { p: number }).p;
      } finally {
        db.close();
      }
    })();
    const startEpoch = leaseRow()?.epoch ?? 0;

    // One `/events` subscriber per process; when its process dies it resumes with Last-Event-ID (on the same slot
    // once restarted, else on any live process).
    const connect = (subscriber: (typeof subscribers)[number]): void => {
      if (!subscribing) return;
      const own = slots[subscriber.slot];
      const service = own && !own.dead ? own : live().length > 0 ? pick(live()) : null;
      if (!service) {
        setTimeout(() => connect(subscriber), 100).unref();
        return;
      }
      const last = subscriber.ids.at(-1);
      const client = new SseClient(`${service.api}/events${last ? '' : `?since=${startPosition}`}`, {
        'Girder-Token': token,
        ...(last ? { 'Last-Event-ID': last } : {}),
      });
      subscriber.connections.push(client);
      const collect = () => {
        while (client.events.length > 0) {
          const event = client.events.shift()!;
          subscriber.ids.push(event.id);
        }
      };
      const watch = async () => {
        while (!client.ended) {
          await client.waitFor(() => client.events.length > 0, 1000).catch(() => undefined);
          collect();
        }
        collect();
        if (subscribing) setTimeout(() => connect(subscriber), 100).unref();
      };
      void watch();
    };
    for (let slot = 0; slot < count; slot++) {
      const subscriber = { connections: [], ids: [], slot };
      subscribers.push(subscriber);
      connect(subscriber);
    }

    // The workload: each client loop picks an operation, and every acknowledged write records what the log must hold.
    let counter = 0;
    const operations: (() => Promise<void>)[] = [
      async () => {
        const parentId = pick(folders);
        const res = await call('POST', '/folder', {
          token,
          form: { parentType: 'folder', parentId, name: `f${++counter}` },
        });
        if (res?.status !== 200) return;
        folders.push(res.body._id);
        expectations.push({
          what: 'create',
          streamId: `folder-${res.body._id}`,
          type: 'FolderCreated',
          matches: (d) => d.parentId === parentId,
        });
      },
      async () => {
        const id = pick(folders.slice(1));
        const value = ++counter;
        if (!id) return;
        const res = await call('PUT', `/folder/${id}/metadata`, { token, json: { chaos: value } });
        if (res?.status !== 200) return;
        expectations.push({
          what: 'metadata',
          streamId: `folder-${id}`,
          type: 'FolderMetadataChanged',
          matches: (d) => d.meta?.chaos === value,
        });
      },
      async () => {
        const [id, target] = [pick(folders.slice(1)), pick(folders)];
        if (!id || id === target) return;
        const res = await call('PUT', `/folder/${id}`, { token, form: { parentType: 'folder', parentId: target } });
        if (res?.status !== 200) return;
        // A move to the parent it already has appends nothing: then the event that put it there is what counts.
        expectations.push({
          what: 'move',
          streamId: `folder-${id}`,
          type: ['FolderMoved', 'FolderCreated', 'FolderCopied'],
          matches: (d) => d.parentId === target,
        });
      },
      async () => {
        const folderId = pick(folders);
        const item = await call('POST', `/item?folderId=${folderId}&name=i${++counter}`, { token });
        if (item?.status !== 200) return;
        expectations.push({
          what: 'item',
          streamId: `item-${item.body._id}`,
          type: 'ItemCreated',
          matches: () => true,
        });
        const bytes = pick(PAYLOADS);
        const file = await call(
          'POST',
          `/file?parentType=item&parentId=${item.body._id}&name=data.bin&size=${bytes.length}`,
          { token, body: bytes },
        );
        if (file?.status !== 200) return;
        expectations.push({
          what: 'upload',
          streamId: `item-${item.body._id}`,
          type: 'FileCreated',
          matches: (d) => d.fileId === file.body._id,
        });
      },
      async () => {
        const [id, target] = [pick(folders.slice(1)), pick(folders)];
        if (!id) return;
        const res = await call('POST', `/folder/${id}/copy`, {
          token,
          form: { parentType: 'folder', parentId: target, name: `c${++counter}` },
        });
        if (res?.status !== 200) return;
        folders.push(res.body._id);
        expectations.push({
          what: 'copy',
          streamId: `folder-${res.body._id}`,
          type: 'FolderCopied',
          matches: (d) => d.sourceId === id,
        });
      },
      async () => {
        if (folders.length < 12) return;
        const id = pick(folders.slice(1));
        const res = await call('DELETE', `/folder/${id}`, { token });
        if (res?.status !== 200) return;
        folders.splice(folders.indexOf(id), 1);
        expectations.push({ what: 'delete', streamId: `folder-${id}`, type: 'FolderDeleted', matches: () => true });
      },
    ];
    const weights = [4, 3, 2, 3, 1, 1];
    const weighted = operations.flatMap((operation, i) => Array<() => Promise<void>>(weights[i]).fill(operation));
    const deadline = Date.now() + options.seconds * 1000;
    const clients = Array.from({ length: options.clients ?? 3 }, async () => {
      while (Date.now() < deadline) {
        if (live().length === 0) await sleep(50);
        else await pick(weighted)();
      }
    });

    // The killer: a random process, the lease holder every other time, then restarted in its slot.
    const restarts: Promise<void>[] = [];
    const killer = (async () => {
      const every = options.killEveryMs ?? 3000;
      while (Date.now() < deadline - 1000 && stats.kills < options.maxKills) {
        await sleep(every / 2 + Math.random() * every);
        if (Date.now() >= deadline - 1000) break;
        const holderPid = Number(leaseRow()?.holder.split(':')[1]);
        const holderSlot = slots.findIndex((s) => s !== null && !s.dead && s.proc.pid === holderPid);
        const slot = stats.kills % 2 === 0 && holderSlot >= 0 ? holderSlot : Math.floor(Math.random() * count);
        const victim = slots[slot];
        // One process at least stays up (a restart takes a few seconds).
        if (!victim || victim.dead || live().length <= 1) continue;
        await kill9(victim);
        stats.kills += 1;
        if (slot === holderSlot) stats.holderKills += 1;
        slots[slot] = null;
        restarts.push(
          sleep(200 + Math.random() * 600)
            .then(() => startService(dataDir, env))
            .then((service) => {
              slots[slot] = service;
            }),
        );
      }
    })();
    await Promise.all([...clients, killer]);
    await Promise.all(restarts);

    // Quiet: every process up, the read models at the head of the log, every subscriber at the head.
    for (let slot = 0; slot < count; slot++)
      if (!slots[slot] || slots[slot]!.dead) slots[slot] = await startService(dataDir, env);
    const db = sqlite();
    const head = () => (db.prepare('SELECT MAX(position) AS p FROM es_events').get() as { p: number }).p;
    const checkpoint = () =>
      (
        db.prepare("SELECT position FROM rm_checkpoints WHERE projection = 'read-models'").get() as
          { position: number } | undefined
      )?.position ?? 0;
    const settleBy = Date.now() + 60_000;
    while (checkpoint() < head() && Date.now() < settleBy) await sleep(100);
    if (checkpoint() < head()) failures.push(`the read models stopped at ${checkpoint()}, the log's head is ${head()}`);
    const expected = (
      db
        .prepare('SELECT position FROM es_events WHERE position > ? ORDER BY position')
        .pluck()
        .all(startPosition) as number[]
    ).map(String);
    for (const subscriber of subscribers) {
      while (subscriber.ids.at(-1) !== expected.at(-1) && Date.now() < settleBy) await sleep(100);
    }

    // Every acknowledged write is in the log.
    const eventsOf = db.prepare('SELECT type, data FROM es_events WHERE stream_id = ?');
    for (const expectation of expectations) {
      const events = eventsOf.all(expectation.streamId) as { type: string; data: string }[];
      const types = ([] as string[]).concat(expectation.type);
      if (!events.some((e) => types.includes(e.type) && expectation.matches(JSON.parse(e.data)))) {
        failures.push(
          `acknowledged ${expectation.what} missing from the log: no ${types.join('/')} on ${expectation.streamId}`,
        );
      }
    }
    // Each subscriber saw the log's sequence: no gap, no duplicate, in order.
    for (const [i, subscriber] of subscribers.entries()) {
      if (JSON.stringify(subscriber.ids) !== JSON.stringify(expected)) {
        const missing = expected.filter((id) => !subscriber.ids.includes(id)).length;
        const duplicates = subscriber.ids.length - new Set(subscriber.ids).size;
        failures.push(
          `subscriber ${i}: ${subscriber.ids.length} events over ${subscriber.connections.length} connections, log has ${expected.length} (missing ${missing}, duplicates ${duplicates})`,
        );
      }
    }
    const takeovers = (leaseRow()?.epoch ?? 0) - startEpoch;
    db.close();
    subscribing = false;
    for (const subscriber of subscribers) for (const client of subscriber.connections) client.close();

    // Stop, then restart one process: its startup sweep runs with the read models caught up.
    for (const service of live()) await stopGracefully(service);
    slots.fill(null);
    const sweeper = await startService(dataDir, env);
    await stopGracefully(sweeper);
    const verified = await runCli(dataDir, ['verify'], env);
    if (verified.code !== 0) failures.push(`verify failed (exit ${verified.code}): ${verified.output.slice(-1500)}`);

    // Blobs: every referenced one exists; no unreferenced one is older than the grace period.
    const after = sqlite();
    const referenced = new Set(after.prepare('SELECT DISTINCT blob_id FROM rm_files').pluck().all() as string[]);
    after.close();
    const blobRoot = path.join(dataDir, 'blobs');
    const stored = new Map<string, number>();
    for (const dir of fs.readdirSync(blobRoot)) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue;
      for (const name of fs.readdirSync(path.join(blobRoot, dir)))
        stored.set(name, fs.statSync(path.join(blobRoot, dir, name)).mtimeMs);
    }
    for (const blobId of referenced)
      if (!stored.has(blobId)) failures.push(`blob ${blobId} is referenced by a file but missing`);
    const oldest = Date.now() - GRACE_SECONDS * 1000 - 5000;
    for (const [blobId, mtime] of stored) {
      if (!referenced.has(blobId) && mtime < oldest)
        failures.push(`blob ${blobId} is unreferenced and older than the grace period`);
    }

    const eventsChecked = subscribers.reduce((sum, s) => sum + s.ids.length, 0);
    const summary =
      `chaos: ${stats.requests} requests (${expectations.length} acknowledged writes), ${stats.kills} kills ` +
      `(${stats.holderKills} of the lease holder), ${takeovers} takeovers, ${eventsChecked} events checked on ` +
      `${subscribers.length} subscribers (${expected.length} in the log), ${stored.size} blobs checked, ` +
      (failures.length === 0 ? 'all checks passed' : `${failures.length} FAILURES`);
    log(summary);
    return {
      requests: stats.requests,
      acknowledged: expectations.length,
      kills: stats.kills,
      holderKills: stats.holderKills,
      takeovers,
      eventsChecked,
      blobsChecked: stored.size,
      failures,
      summary,
    };
  } finally {
    subscribing = false;
    for (const subscriber of subscribers) for (const client of subscriber.connections) client.close();
    for (const service of slots) if (service && !service.dead) await kill9(service);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const seconds = Number(process.env.CHAOS_SECONDS ?? 300);
  const maxKills = Number(process.env.CHAOS_MAX_KILLS ?? Math.ceil(seconds / 3));
  runChaos({ seconds, maxKills, log: (line) => console.log(line) }).then(
    (report) => {
      for (const failure of report.failures) console.error(failure);
      process.exit(report.failures.length === 0 ? 0 : 1);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
