/**
 * Two answers compared for what a client gets, leaving out what is each answer's own: its
 * operation's id (`extensions.cost.operationId`, new for every answer) and how long each upstream
 * call took (`ms`).
 */
export function comparable(answer: unknown): unknown {
  return JSON.parse(JSON.stringify(answer, (k, v: unknown) => (k === 'operationId' || k === 'ms' ? undefined : v)));
}

const OPERATION_ID = /"operationId":"[0-9a-f-]{36}"/g;

/** `comparable` for a body as sent (JSON, SSE or multipart text): its operation ids stand as `…`. */
export function comparableBody(body: string): string {
  return body.replace(OPERATION_ID, '"operationId":"…"');
}
