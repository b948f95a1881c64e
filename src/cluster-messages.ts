/*
 * The one message the cluster primary (src/cluster-primary.ts) sends an API process
 * (src/api-process.ts): in a rolling restart, drain now. Not SIGTERM, which first waits for a
 * balancer to take the process out (SHUTDOWN_DELAY_MS): in a rolling restart the port stays
 * open on the other processes and /health must keep answering 200. Its own small module so
 * that the primary does not load the app.
 */
export const RETIRE = { api: 'retire' } as const;

export function isRetire(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { api?: unknown }).api === RETIRE.api;
}
