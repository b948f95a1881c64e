import { ConfigError, UsageError } from '../errors.js';

/**
 * Runs an entry point's main function: a configuration or usage problem is printed as one
 * line on stderr with exit code 1, without a stack; so is a failure of the disk or a database
 * file that no caller turned into such a line (the entry points name the file and what to do;
 * this is the net under them). Anything else is printed whole: it is a bug, and the stack is
 * what a developer needs.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
    } else if (isEnvironmentFailure(error)) {
      process.stderr.write(`failed: ${error.message.split('\n')[0]} (${error.code}): check the disk and the files named in the configuration\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  });
}

/** An error of the disk or a database file (a SQLite result code, or a system call's errno). */
function isEnvironmentFailure(error: unknown): error is Error & { code: string } {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string') return false;
  return /^SQLITE_(BUSY|LOCKED|CANTOPEN|NOTADB|CORRUPT|IOERR|READONLY|FULL|PROTOCOL|PERM|AUTH)/.test(code) || typeof syscall === 'string';
}
