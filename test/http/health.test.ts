import express from 'express';
import { healthRoutes } from '../../src/http/health';
import type { NewEvent } from '../../src/ports/eventStore';
import { ApiClient, startApi } from '../support/apiClient';

const ev = (n: number): NewEvent => ({
  type: 'HealthProbeTick',
  data: { n },
  metadata: { userId: null, requestId: null, correlationId: null, causationId: null, at: new Date().toISOString() },
});

describe('GET /healthz and /readyz (embedded default)', () => {
  let api: ApiClient;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await api.close();
  });

  it('/healthz answers 200 {"status":"ok"} outside /api/v1', async () => {
    const res = await api.site().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await api.anonymous().get('/healthz')).status).toBe(404);
  });

  it('/readyz answers 200 when the stores answer and the projector is at the head', async () => {
    await api.createUser('admin');
    const head = await api.runtime.services.eventStore.headPosition();
    const res = await api.site().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      checks: {
        eventStore: { status: 'ok', headPosition: head.toString() },
        readModel: { status: 'ok', checkpoint: head.toString() },
        storage: { status: 'ok' },
        projector: { status: 'ok', lease: 'held', position: head.toString(), lagEvents: 0 },
      },
    });
  });

  it('/readyz stays 200 while the projector lags by fewer than the allowed events', async () => {
    const { eventStore, projector } = api.runtime.services;
    await projector.stop();
    await eventStore.appendToStream('healthprobe-1', [1, 2, 3].map(ev), { expectedState: 'no_stream' });
    const res = await api.site().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body.checks.projector).toEqual({
      status: 'ok',
      lease: 'stopped',
      position: expect.any(String),
      lagEvents: 3,
    });
  });

  it('/readyz answers 503 naming the projector when it lags by the allowed events or more', async () => {
    const { eventStore, projector } = api.runtime.services;
    await projector.stop();
    await eventStore.appendToStream(
      'healthprobe-1',
      Array.from({ length: 100 }, (_, i) => ev(i)),
      { expectedState: 'no_stream' },
    );
    const res = await api.site().get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unavailable');
    expect(res.body.failed).toEqual(['projector']);
    expect(res.body.checks.eventStore.status).toBe('ok');
    expect(res.body.checks.projector).toEqual({
      status: 'failed',
      lease: 'stopped',
      error: expect.stringMatching(/^100 or more events behind the head \(projector at \d+, head at \d+\)$/),
    });
  });

  it('/readyz answers 503 naming the event store when it fails', async () => {
    jest.spyOn(api.runtime.services.eventStore, 'headPosition').mockRejectedValue(new Error('connection refused'));
    const res = await api.site().get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.failed).toEqual(['eventStore']);
    expect(res.body.checks.eventStore).toEqual({ status: 'failed', error: 'connection refused' });
    expect(res.body.checks.projector).toEqual({
      status: 'skipped',
      lease: 'held',
      error: 'needs the event store head',
    });
    expect(res.body.checks.readModel.status).toBe('ok');
  });

  it('/readyz answers 503 when a store does not answer within the timeout', async () => {
    const { services } = api.runtime;
    jest.spyOn(services.readModel, 'checkpoint').mockReturnValue(new Promise<bigint>(() => undefined));
    // The health routes alone, with a short store timeout.
    const quick = new ApiClient({ ...api.server, app: express().use(healthRoutes(services, { timeoutMs: 50 })) });
    const started = Date.now();
    const res = await quick.site().get('/readyz');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.status).toBe(503);
    expect(res.body.failed).toEqual(['readModel']);
    expect(res.body.checks.readModel).toEqual({ status: 'failed', error: 'read model did not answer within 50 ms' });
  });

  it('/readyz answers 503 when the projector stopped on a failure', async () => {
    const { projector } = api.runtime.services;
    jest.spyOn(projector, 'failed', 'get').mockReturnValue(new Error('projection crashed'));
    const res = await api.site().get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.failed).toEqual(['projector']);
    expect(res.body.checks.projector).toEqual({
      status: 'failed',
      lease: 'held',
      error: 'stopped: projection crashed',
    });
  });
});
