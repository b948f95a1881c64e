import { ConfigError, UsageError } from './errors.js';

/**
 * Runs an entry point's main function: a configuration or usage problem is printed as one
 * line on stderr with exit code 1, without a stack; anything else is printed whole (it is a
 * bug, and the stack is what a developer needs).
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  });
}
