import { Meilisearch, MeilisearchApiError, MeilisearchRequestError, type Task } from 'meilisearch';

export interface MeiliConnection {
  host: string;
  apiKey: string | undefined;
  /** Per request: the client has no timeout unless one is set. */
  timeoutMs: number;
}

export function createMeiliClient(connection: MeiliConnection): Meilisearch {
  return new Meilisearch({
    host: connection.host,
    apiKey: connection.apiKey,
    timeout: connection.timeoutMs,
  });
}

/** The live index of a locale, e.g. `articles_en`. */
export const indexUid = (prefix: string, locale: string) => `${prefix}_${locale}`;

/**
 * One line for an operator about a failed Meilisearch call, never the API key. The client
 * throws its own errors for API answers and for network failures and timeouts, but a proxy's
 * HTML page (a 502 from nginx) surfaces as a bare SyntaxError from JSON.parse.
 */
export function describeMeiliError(error: unknown): string {
  if (error instanceof MeilisearchApiError) {
    const code = (error.cause as { code?: string } | undefined)?.code;
    return `Meilisearch answered ${error.response.status}${code ? ` (${code})` : ''}: ${error.message}`;
  }
  if (error instanceof MeilisearchRequestError) {
    const cause = error.cause as { name?: string; message?: string; cause?: { code?: string } } | undefined;
    if (cause?.name === 'MeilisearchRequestTimeOutError') return `Meilisearch did not answer in time (${cause.message})`;
    return `Meilisearch unreachable: ${cause?.cause?.code ?? cause?.message ?? error.message}`;
  }
  if (error instanceof SyntaxError) return 'Meilisearch (or a proxy in front of it) answered something that is not JSON';
  return `Meilisearch error: ${(error as Error)?.message ?? String(error)}`;
}

/** A task that ended in any state but `succeeded` (the client resolves, it does not throw). */
export class MeiliTaskError extends Error {
  override name = 'MeiliTaskError';
}

/** Waits for a task and insists that it succeeded. */
export async function waitSucceeded(client: Meilisearch, taskUid: number, timeoutMs: number, what: string): Promise<Task> {
  const task = await client.tasks.waitForTask(taskUid, { timeout: timeoutMs, interval: 50 });
  if (task.status !== 'succeeded') {
    const reason = task.error ? `${task.error.code}: ${task.error.message}` : task.status;
    throw new MeiliTaskError(`Meilisearch task ${taskUid} (${what}) ${task.status}: ${reason}`);
  }
  return task;
}
