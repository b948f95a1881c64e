import type { ChildProcess } from 'node:child_process';

/** A child process's output so far, and a bounded wait for its exit. */
export interface WatchedChild {
  out: () => string;
  err: () => string;
  /** The exit code, or 'still running' if the process has not exited within the time given. */
  exit: (withinMs: number) => Promise<number | null | 'still running'>;
}

/** Collects a child's stdout and stderr (spawned with both piped) from now on. */
export function watchChild(child: ChildProcess): WatchedChild {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    out: () => out,
    err: () => err,
    exit: (withinMs) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), withinMs)));
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
  };
}

/** Whether a process with this pid is still running (signal 0 tests without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
