import { Subject } from 'rxjs';

/**
 * Girder-style hook events (`rest.get.folder/:id.before`, `auth.user.get`, …) on an RxJS pipeline.
 * Listeners run in registration order and may be async; a listener can prevent the default action and supply a
 * response (the first response wins), or stop later listeners from running.
 */
export class HookEvent<Info = Record<string, unknown>> {
  defaultPrevented = false;
  propagationStopped = false;
  readonly responses: unknown[] = [];
  constructor(readonly name: string, readonly info: Info) {}
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

interface Registration {
  name: string;
  handlerName: string;
  listener: HookListener<any>;
}

export class HookBus {
  private registrations: Registration[] = [];
  /** Every event after its listeners ran: for observers (logging, tests) that only watch. */
  readonly fired$ = new Subject<HookEvent<any>>();

  /** Registers a listener; `handlerName` lets it be removed later (as Girder's events.bind). Returns an unbind. */
  on<Info = Record<string, unknown>>(name: string, handlerName: string, listener: HookListener<Info>): () => void {
    const registration: Registration = { name, handlerName, listener };
    this.registrations.push(registration);
    return () => {
      this.registrations = this.registrations.filter((r) => r !== registration);
    };
  }

  off(name: string, handlerName?: string): void {
    this.registrations = this.registrations.filter(
      (r) => r.name !== name || (handlerName !== undefined && r.handlerName !== handlerName),
    );
  }

  hasListeners(name: string): boolean {
    return this.registrations.some((r) => r.name === name);
  }

  async trigger<Info>(name: string, info: Info): Promise<HookEvent<Info>> {
    const event = new HookEvent<Info>(name, info);
    for (const r of this.registrations.filter((reg) => reg.name === name)) {
      await r.listener(event);
      if (event.propagationStopped) break;
    }
    this.fired$.next(event);
    return event;
  }
}
