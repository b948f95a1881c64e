import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One full garbage collection of the calling thread's heap, for the end of start-up warming.
 * Warming (views, rehearsed searches and responses) leaves tens of MB of garbage behind; left
 * there, the first full collection came during the first partner's searches, always at the
 * same place in the bench's fixed list of cold queries, and made that one take 43-52 ms
 * instead of 10 (decision 0076). Collected before the port opens, it costs the start, not a
 * partner. `gc` is exposed through V8's flag for contexts made after it is set, as Node's
 * documentation of v8.setFlagsFromString shows; no flag is needed on the command line.
 */
export function collectStartupGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
