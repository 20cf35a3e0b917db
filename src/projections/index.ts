import { combineProjections } from './projection';
import { accountsProjection } from './accountsProjection';
import { collectionsProjection } from './collectionsProjection';
import { foldersProjection } from './foldersProjection';
import { itemsProjection } from './itemsProjection';
import { groupsProjection } from './groupsProjection';

/** Every read model's projection, in one dispatch table driven by the projector. */
export const readModelProjection = combineProjections(
  accountsProjection,
  collectionsProjection,
  foldersProjection,
  itemsProjection,
  groupsProjection,
);
