import type { Projection } from './projection';

export const collectionsProjection: Projection = {
  handlers: {},
};
