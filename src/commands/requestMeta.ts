/** Who and what caused a command: becomes the metadata of every event it appends. */
export interface RequestMeta {
  requestId: string;
  userId: string | null;
  correlationId: string;
  /** The event or command that directly caused this work (null for a user's request). */
  causationId: string | null;
}

export function systemMeta(requestId: string): RequestMeta {
  return { requestId, userId: null, correlationId: requestId, causationId: null };
}
