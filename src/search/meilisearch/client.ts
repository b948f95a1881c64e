import { Meilisearch, MeilisearchApiError, MeilisearchRequestError, MeilisearchTaskTimeOutError, type Task } from 'meilisearch';
import { MeiliVersionError } from './version.js';

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
    // Given a signal, the client applies no timeout of its own: the search's signal carries it
    // (AbortSignal.timeout), and the request fails with that signal's TimeoutError.
    if (cause?.name === 'TimeoutError') return 'Meilisearch did not answer in time (no answer within MEILI_TIMEOUT_MS)';
    return `Meilisearch unreachable: ${cause?.cause?.code ?? cause?.message ?? error.message}`;
  }
  if (error instanceof SyntaxError) return 'Meilisearch (or a proxy in front of it) answered something that is not JSON';
  if (isOwnMeiliError(error)) return (error as Error).message;
  return `Meilisearch error: ${(error as Error)?.message ?? String(error)}`;
}

/**
 * A search answered `degraded: true`: the engine hit its search cutoff (`searchCutoffMs`, 1,500 ms
 * by default) and returned what it had, unranked. A page in no particular order is not the
 * ranked page partners ask for: the search fails (503) and the reason says why.
 */
export class MeiliDegradedError extends Error {
  override name = 'MeiliDegradedError';
}

/** A task that ended in any state but `succeeded` (the client resolves, it does not throw), or was not waited for long enough. */
export class MeiliTaskError extends Error {
  override name = 'MeiliTaskError';
}

/** Errors whose message is already the operator's one line. */
export const isOwnMeiliError = (error: unknown): boolean =>
  error instanceof MeiliTaskError || error instanceof MeiliVersionError || error instanceof MeiliDegradedError;

/**
 * Waits for a task and insists that it succeeded. `timeoutMs` is how long this task may still
 * take; the client's MeilisearchTaskTimeOutError (meilisearch-js 0.62; MeiliSearchTaskTimeOutError
 * in older clients) becomes a MeiliTaskError that says what was waited for and for how long.
 */
export async function waitSucceeded(client: Meilisearch, taskUid: number, timeoutMs: number, what: string): Promise<Task> {
  let task: Task;
  try {
    task = await client.tasks.waitForTask(taskUid, { timeout: Math.max(1, Math.round(timeoutMs)), interval: 50 });
  } catch (error) {
    if (error instanceof MeilisearchTaskTimeOutError) {
      throw new MeiliTaskError(
        `Meilisearch task ${taskUid} (${what}) was still not finished after ${Math.round(timeoutMs)} ms (MeilisearchTaskTimeOutError): ` +
          'Meilisearch is busy or slow; the task may still finish, the next run checks the index again',
      );
    }
    throw error;
  }
  if (task.status !== 'succeeded') {
    const reason = task.error ? `${task.error.code}: ${task.error.message}` : task.status;
    throw new MeiliTaskError(`Meilisearch task ${taskUid} (${what}) ${task.status}: ${reason}`);
  }
  return task;
}

/** An enqueued task and what it does, for the operator's messages. */
export interface PendingTask {
  taskUid: number;
  what: string;
}

/**
 * Waits for tasks enqueued together, in order, within one deadline for all of them: Meilisearch
 * processes them one batch after another, so the last one finishes only after the work of all.
 */
export async function waitAllSucceeded(client: Meilisearch, tasks: readonly PendingTask[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const { taskUid, what } of tasks) await waitSucceeded(client, taskUid, Math.max(1, deadline - Date.now()), what);
}
