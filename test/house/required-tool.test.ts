import { describe, expect, it, vi } from 'vitest';
import { onCi, skipWithoutTool } from '../support/tools/required-tool.js';

/*
 * The rule for the tools suites drive (issue 33 item 6): a developer's machine skips with the
 * reason printed; CI fails, so a machine without the tool cannot make CI green by skipping.
 */

describe('a suite that needs a system tool', () => {
  it('runs wherever the tool is present, on CI or not', () => {
    expect(skipWithoutTool('nginx', undefined, { CI: 'true' })).toBe(false);
    expect(skipWithoutTool('nginx', undefined, {})).toBe(false);
  });

  it('is skipped on a developer machine, printing why', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      expect(skipWithoutTool('haproxy', 'not on PATH', {})).toBe(true);
      expect(warn).toHaveBeenCalledWith('skipped: haproxy is needed and missing: not on PATH');
    } finally {
      warn.mockRestore();
    }
  });

  it('fails on CI instead of skipping', () => {
    expect(() => skipWithoutTool('faketime', 'not on PATH', { CI: 'true' })).toThrow(/faketime is needed and missing: not on PATH/);
    expect(() => skipWithoutTool('promtool', 'not on PATH', { CI: '1' })).toThrow(/CI installs it/);
  });

  it('reads CI the way CI services set it', () => {
    expect(onCi({ CI: 'true' })).toBe(true);
    expect(onCi({ CI: '1' })).toBe(true);
    expect(onCi({ CI: 'false' })).toBe(false);
    expect(onCi({ CI: '0' })).toBe(false);
    expect(onCi({ CI: '' })).toBe(false);
    expect(onCi({})).toBe(false);
  });
});
