import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../../../src/lib/log-batch.js';

const LOGGER_MODULE = fileURLToPath(new URL('../../../dist/src/logger.js', import.meta.url));

function recorder() {
  const writes: string[] = [];
  return { writes, out: { write: (text: string) => writes.push(text) } };
}

describe('TurnBatch', () => {
  it('writes the lines of one turn of the event loop as one write, in order, when the turn ends', async () => {
    const { writes, out } = recorder();
    const batch = new TurnBatch(out);
    batch.write('a\n');
    batch.write('b\n');
    batch.write('c\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n']);
    batch.write('d\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('writes what is pending at once on flush, and calls back', () => {
    const { writes, out } = recorder();
    const batch = new TurnBatch(out);
    batch.write('a\n');
    let called = false;
    batch.flush(() => (called = true));
    expect(writes).toEqual(['a\n']);
    expect(called).toBe(true);
    batch.flush();
    expect(writes).toEqual(['a\n']);
  });

  it('loses no line when the process exits in the same turn, after a normal exit or a throw', () => {
    for (const ending of ['process.exit(3)', 'throw new Error("boom")']) {
      const script = `
        const { createLogger } = await import(${JSON.stringify(LOGGER_MODULE)});
        const logger = createLogger({ level: 'info', name: 'api', batched: true });
        for (let i = 0; i < 50; i++) logger.info({ i }, 'line');
        ${ending};`;
      let stdout = '';
      try {
        stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        stdout = (error as { stdout: string }).stdout;
      }
      const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { i: number; name: string });
      expect(lines.map((l) => l.i)).toEqual([...Array(50).keys()]);
      expect(lines[0]!.name).toBe('api');
    }
  });
});
