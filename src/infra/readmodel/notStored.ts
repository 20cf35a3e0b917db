/**
 * The error of a projection write that needs a row the read model lacks (a parent to derive ancestry from, the row it
 * moves). The projection guards such writes on the row's presence (src/projections/lateEvents.ts), so reaching this
 * is a bug, and the projector stops on it instead of writing a wrong tree.
 */
export function notStored(what: string, id: string, of: string): Error {
  return new Error(`Projection: ${what} ${id} of ${of} is not in the read model.`);
}
