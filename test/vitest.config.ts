import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Lives under test/ to keep the repository's top level to the files the team agreed on.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real servers and child processes; two forks match the two cores.
    pool: 'forks',
    maxWorkers: 2,
  },
});
