import { param } from './params';
import { parseStringList } from '../domain/metadata';

/** `PUT /<resource>/:id/metadata` of folders, items and collections (Girder's setMetadata): the same parameters. */
export const setMetadataParams = () =>
  [
    param.jsonBody('metadata', { shape: 'object', description: 'A JSON object containing the metadata keys to add' }),
    param.flag('allowNull', false, { description: 'Whether "null" is allowed as a metadata value.' }),
  ] as const;

/** `DELETE /<resource>/:id/metadata` of folders, items and collections (Girder's deleteMetadata). */
export const deleteMetadataParams = () =>
  [
    param.jsonBody('fields', {
      description: 'A JSON list containing the metadata fields to delete',
      validate: (value) => parseStringList('fields', value),
    }),
  ] as const;
