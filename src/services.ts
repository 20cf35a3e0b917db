import type { Logger } from 'pino';
import type { Config } from './config';
import type { EventStore } from './ports/eventStore';
import type { ReadModel } from './ports/readModel';
import type { HookBus } from './bus/hooks';
import type { Projector } from './projections/projector';
import type { CommandRunner } from './commands/commandContext';

/** Everything a route handler may use; built once by the composition root (src/bootstrap.ts). */
export interface Services {
  config: Config;
  version: string;
  logger: Logger;
  eventStore: EventStore;
  readModel: ReadModel;
  projector: Projector;
  commands: CommandRunner;
  hooks: HookBus;
}
