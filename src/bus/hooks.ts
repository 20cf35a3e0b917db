import type { Observable } from 'rxjs';
import { Subject, filter } from './rxjs';

/**
 * Girder-style hook events (`rest.get.folder/:id.before`, `auth.user.get`, …) on an RxJS pipeline.
 * Listeners run in registration order and may be async; a listener can prevent the default action and supply a
 * response (the first response wins), or stop later listeners from running. See docs/hooks.md.
 */
export class HookEvent<Info = Record<string, unknown>> {
  defaultPrevented = false;
  propagationStopped = false;
  readonly responses: unknown[] = [];
  /** The `handlerName` of the listener running now (Girder's `currentHandlerName`). */
  currentHandlerName: string | null = null;
  constructor(
    readonly name: string,
    readonly info: Info,
  ) {}
  preventDefault(): this {
    this.defaultPrevented = true;
    return this;
  }
  stopPropagation(): this {
    this.propagationStopped = true;
    return this;
  }
  addResponse(response: unknown): this {
    this.responses.push(response);
    return this;
  }
}

export type HookListener<Info = Record<string, unknown>> = (event: HookEvent<Info>) => void | Promise<void>;

/**
 * The access a listener declares (same modes as routes). A listener of a `rest.*.before` event that declares none
 * requires a site administrator, as Girder's `_defaultAccess`: a plugin cannot lower a route's access by accident.
 */
type HookAccess = 'public' | 'user' | 'admin' | 'token';

export interface ListenerOptions {
  access?: HookAccess;
}

/** What a trigger's `pre` callback learns about the listener about to run. */
export interface ListenerInfo {
  name: string;
  handlerName: string;
  access?: HookAccess;
}

export interface TriggerOptions {
  /** Runs before each listener (Girder's `pre`); throwing stops the trigger and propagates. */
  pre?(listener: ListenerInfo): void | Promise<void>;
}

interface Registration extends ListenerInfo {
  listener: HookListener<unknown>;
}

export class HookBus {
  private registrations: Registration[] = [];
  /** Every event after its listeners ran: for observers (logging, tests) that only watch. */
  readonly fired$ = new Subject<HookEvent<unknown>>();

  /**
   * Registers a listener under `handlerName` (as Girder's `events.bind`); returns a function that unbinds it.
   */
  on<Info = Record<string, unknown>>(
    name: string,
    handlerName: string,
    listener: HookListener<Info>,
    options: ListenerOptions = {},
  ): () => void {
    // The bus does not know each name's info type: `on` and `trigger` agree on it by name, as Girder's events do.
    const registration: Registration = {
      name,
      handlerName,
      listener: listener as HookListener<unknown>,
      ...(options.access ? { access: options.access } : {}),
    };
    this.registrations.push(registration);
    return () => {
      this.registrations = this.registrations.filter((r) => r !== registration);
    };
  }

  /** Unbinds the listeners of `name` registered under `handlerName`, or all of them when it is omitted. */
  off(name: string, handlerName?: string): void {
    this.registrations = this.registrations.filter(
      (r) => r.name !== name || (handlerName !== undefined && r.handlerName !== handlerName),
    );
  }

  hasListeners(name: string): boolean {
    return this.registrations.some((r) => r.name === name);
  }

  /** The events of one name as they finish (after all listeners ran). */
  observe<Info = Record<string, unknown>>(name: string): Observable<HookEvent<Info>> {
    return this.fired$.pipe(filter((event): event is HookEvent<Info> => event.name === name));
  }

  async trigger<Info>(name: string, info: Info, options: TriggerOptions = {}): Promise<HookEvent<Info>> {
    const event = new HookEvent<Info>(name, info);
    // A snapshot: listeners bound or unbound while this event runs take effect from the next trigger.
    for (const r of this.registrations.filter((reg) => reg.name === name)) {
      event.currentHandlerName = r.handlerName;
      if (options.pre)
        await options.pre({ name: r.name, handlerName: r.handlerName, ...(r.access ? { access: r.access } : {}) });
      await r.listener(event);
      if (event.propagationStopped) break;
    }
    event.currentHandlerName = null;
    this.fired$.next(event);
    return event;
  }
}
