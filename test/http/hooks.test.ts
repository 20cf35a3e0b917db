import { firstValueFrom, take, toArray } from 'rxjs';
import { HookBus, HookEvent } from '../../src/bus/hooks';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { probeResource } from '../support/probeResource';

describe('HookBus', () => {
  it('runs listeners in registration order, awaiting async ones', async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.on('e', 'slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('slow');
    });
    bus.on('e', 'fast', () => {
      order.push('fast');
    });
    await bus.trigger('e', {});
    expect(order).toEqual(['slow', 'fast']);
  });

  it('stops at stopPropagation and keeps the first response first', async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on('e', 'a', (event) => {
      seen.push(event.currentHandlerName!);
      event.addResponse(1).preventDefault();
    });
    bus.on('e', 'b', (event) => {
      seen.push(event.currentHandlerName!);
      event.addResponse(2).stopPropagation();
    });
    bus.on('e', 'c', () => {
      seen.push('c');
    });
    const event = await bus.trigger('e', { x: 1 });
    expect(seen).toEqual(['a', 'b']);
    expect(event.defaultPrevented).toBe(true);
    expect(event.responses).toEqual([1, 2]);
    expect(event.info).toEqual({ x: 1 });
  });

  it('unbinds by handle, by handler name, or all of an event', async () => {
    const bus = new HookBus();
    const calls: string[] = [];
    const unbind = bus.on('e', 'a', () => void calls.push('a'));
    bus.on('e', 'b', () => void calls.push('b'));
    bus.on('e', 'c', () => void calls.push('c'));
    unbind();
    bus.off('e', 'b');
    await bus.trigger('e', {});
    expect(calls).toEqual(['c']);
    bus.off('e');
    expect(bus.hasListeners('e')).toBe(false);
  });

  it('runs the pre callback before each listener and stops when it throws', async () => {
    const bus = new HookBus();
    const calls: string[] = [];
    bus.on('e', 'open', () => void calls.push('open'), { access: 'public' });
    bus.on('e', 'closed', () => void calls.push('closed'));
    await expect(
      bus.trigger('e', {}, {
        pre: (listener) => {
          if (!listener.access) throw new Error(`${listener.handlerName} declares no access`);
        },
      }),
    ).rejects.toThrow('closed declares no access');
    expect(calls).toEqual(['open']);
  });

  it('publishes finished events on fired$ and observe(name)', async () => {
    const bus = new HookBus();
    const names = firstValueFrom(bus.fired$.pipe(take(2), toArray()));
    const only = firstValueFrom(bus.observe('b'));
    await bus.trigger('a', {});
    await bus.trigger('b', { n: 2 });
    expect((await names).map((e) => e.name)).toEqual(['a', 'b']);
    expect((await only).info).toEqual({ n: 2 });
  });
});

describe('rest.* and auth.user.get hooks over HTTP', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  const hooks = () => api.runtime.services.hooks;
  let fired: HookEvent<any>[] = [];

  beforeAll(async () => {
    api = await startApi({}, { resources: [probeResource] });
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    hooks().fired$.subscribe((event) => {
      if (event.name.startsWith('rest.')) fired.push(event);
    });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    fired = [];
  });
  afterEach(() => {
    for (const name of [...new Set(fired.map((e) => e.name)), 'auth.user.get']) hooks().off(name, 'test');
  });

  const names = () => fired.map((e) => e.name);

  it('names events rest.<method>.<resource>[/<route>].before|after', async () => {
    await api.as(admin).get(`/user/${alice._id}`);
    expect(names()).toEqual([`rest.get.user/:id.before`, `rest.get.user/:id.after`]);
    fired = [];
    await api.createUser('bobby');
    expect(names()).toEqual(['rest.post.user.before', 'rest.post.user.after']);
    fired = [];
    await api.anonymous().get('/probe/x/details');
    expect(names()).toEqual(['rest.get.probe/:id/details.before', 'rest.get.probe/:id/details.after']);
  });

  it('names events after the overridden method', async () => {
    await api.anonymous().post('/probe/params').set('X-HTTP-Method-Override', 'patch');
    expect(names()).toEqual(['rest.patch.probe/params.before', 'rest.patch.probe/params.after']);
  });

  it('carries route tokens and params, and returnVal on after', async () => {
    const res = await api.as(alice).get('/probe/thing/abc?extra=1&other=x');
    expect(res.status).toBe(200);
    const [before, after] = fired;
    expect(before.info).toEqual(expect.objectContaining({ id: 'abc', params: { extra: '1', other: 'x' } }));
    expect(after.info).toEqual({ id: 'abc', params: { extra: '1', other: 'x' }, returnVal: { id: 'abc', extra: '1', from: 'handler' } });
  });

  it('lets a before-listener replace the response: neither the handler nor its access check runs', async () => {
    hooks().on(
      'rest.get.probe/thing/:id.before',
      'test',
      (event) => {
        event.preventDefault().addResponse({ from: 'listener', id: (event.info as { id: string }).id });
      },
      { access: 'public' },
    );
    const res = await api.anonymous().get('/probe/thing/zz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ from: 'listener', id: 'zz' });
    expect(names()).toEqual(['rest.get.probe/thing/:id.before', 'rest.get.probe/thing/:id.after']);
    expect(fired[1].info.returnVal).toEqual({ from: 'listener', id: 'zz' });
  });

  it('ignores preventDefault without a response, and a response without preventDefault', async () => {
    const handled = { id: 'zz', extra: null, from: 'handler' };
    hooks().on('rest.get.probe/thing/:id.before', 'test', (event) => void event.preventDefault(), { access: 'public' });
    expect((await api.as(alice).get('/probe/thing/zz')).body).toEqual(handled);
    hooks().off('rest.get.probe/thing/:id.before', 'test');
    hooks().on('rest.get.probe/thing/:id.before', 'test', (event) => void event.addResponse('ignored'), { access: 'public' });
    expect((await api.as(alice).get('/probe/thing/zz')).body).toEqual(handled);
  });

  it('requires a site admin before a before-listener that declares no access (Girder _defaultAccess)', async () => {
    const calls: string[] = [];
    hooks().on('rest.get.probe/thing/:id.before', 'test', () => void calls.push('ran'));
    const anonymous = await api.anonymous().get('/probe/thing/zz');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'Administrator access required.', type: 'access' });
    const user = await api.as(alice).get('/probe/thing/zz');
    expect(user.status).toBe(403);
    expect(calls).toEqual([]);
    expect((await api.as(admin).get('/probe/thing/zz')).status).toBe(200);
    expect(calls).toEqual(['ran']);
  });

  it("enforces a before-listener's declared access", async () => {
    hooks().on('rest.get.probe/thing/:id.before', 'test', (event) => void event.preventDefault().addResponse('mine'), { access: 'user' });
    expect((await api.anonymous().get('/probe/thing/zz')).body).toEqual({ message: 'You must be logged in.', type: 'access' });
    expect((await api.as(alice).get('/probe/thing/zz')).body).toBe('mine');
  });

  it('lets a before-listener adjust the params the handler receives', async () => {
    hooks().on(
      'rest.get.probe/thing/:id.before',
      'test',
      (event) => {
        (event.info as { params: Record<string, string> }).params.extra = 'changed';
      },
      { access: 'public' },
    );
    const res = await api.as(alice).get('/probe/thing/q?extra=orig');
    expect(res.body).toEqual({ id: 'q', extra: 'changed', from: 'handler' });
  });

  it('lets an after-listener replace the result, the first response winning', async () => {
    hooks().on('rest.get.probe/thing/:id.after', 'test', (event) => {
      const { returnVal } = event.info as { returnVal: Record<string, unknown> };
      event.preventDefault().addResponse({ ...returnVal, from: 'after' });
    });
    hooks().on('rest.get.probe/thing/:id.after', 'test', (event) => void event.preventDefault().addResponse('second'));
    const res = await api.as(alice).get('/probe/thing/q');
    expect(res.body).toEqual({ id: 'q', extra: null, from: 'after' });
  });

  it('stops later listeners on stopPropagation', async () => {
    const calls: string[] = [];
    hooks().on('rest.get.probe/params.after', 'test', (event) => {
      calls.push('first');
      event.stopPropagation();
    });
    hooks().on('rest.get.probe/params.after', 'test', (event) => {
      calls.push('second');
      event.preventDefault().addResponse('never');
    });
    const res = await api.anonymous().get('/probe/params');
    expect(res.body.route).toBe('GET params');
    expect(calls).toEqual(['first']);
  });

  it('awaits async listeners in order', async () => {
    const calls: string[] = [];
    hooks().on('rest.get.probe/params.after', 'test', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      calls.push('slow');
      event.preventDefault().addResponse({ async: true });
    });
    hooks().on('rest.get.probe/params.after', 'test', () => void calls.push('next'));
    expect((await api.anonymous().get('/probe/params')).body).toEqual({ async: true });
    expect(calls).toEqual(['slow', 'next']);
  });

  it('fires .failed when the handler, its access check or its params fail, then answers the error', async () => {
    const boom = await api.anonymous().get('/probe/boom');
    expect(boom.status).toBe(500);
    expect(names()).toEqual(['rest.get.probe/boom.before', 'rest.get.probe/boom.failed']);
    fired = [];
    expect((await api.anonymous().get('/probe/thing/x')).status).toBe(401);
    expect(names()).toEqual(['rest.get.probe/thing/:id.before', 'rest.get.probe/thing/:id.failed']);
    fired = [];
    expect((await api.anonymous().get('/probe/nameFirst')).status).toBe(400);
    expect(names()).toEqual(['rest.get.probe/nameFirst.before', 'rest.get.probe/nameFirst.failed']);
    expect(fired[1].info).toEqual({ params: {} });
  });

  it('fires nothing for a request that matches no route', async () => {
    await api.anonymous().delete('/user');
    expect(names()).toEqual([]);
  });

  it('lets an auth.user.get listener supply the user', async () => {
    const aliceDoc = await api.runtime.services.readModel.users.get(alice._id);
    let infoSeen: unknown;
    hooks().on('auth.user.get', 'test', (event) => {
      infoSeen = event.info;
      event.preventDefault().addResponse(aliceDoc);
    });
    const me = await api.anonymous().get('/user/me');
    expect(me.status).toBe(200);
    expect(me.body.login).toBe('alice');
    expect(infoSeen).toEqual({ token: null });
    const res = await api.anonymous().get('/probe/private?name=n');
    expect(res.body).toEqual({ name: 'n', login: 'alice' });
    expect((await api.anonymous().get('/probe/admin')).status).toBe(403);
    hooks().off('auth.user.get', 'test');
    expect((await api.anonymous().get('/user/me')).body).toBeNull();
  });
});
