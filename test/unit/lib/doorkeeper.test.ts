import { describe, expect, it } from 'vitest';
import { Doorkeeper } from '../../../src/lib/doorkeeper.js';

describe('Doorkeeper', () => {
  it('admits a key on its second offer, not its first', () => {
    const door = new Doorkeeper(100);
    expect(door.admit('/api/v1/search?q=laser')).toBe(false);
    expect(door.admit('/api/v1/search?q=lasers')).toBe(false);
    expect(door.admit('/api/v1/search?q=laser')).toBe(true);
    expect(door.admit('/api/v1/search?q=laser')).toBe(true);
  });

  it('remembers at least `capacity` distinct keys after a key, and forgets it after twice as many', () => {
    const door = new Doorkeeper(100);
    door.admit('kept');
    for (let i = 0; i < 99; i++) door.admit(`other-${i}`);
    expect(door.admit('kept')).toBe(true);
    const forgotten = new Doorkeeper(100);
    forgotten.admit('gone');
    for (let i = 0; i < 200; i++) forgotten.admit(`other-${i}`);
    expect(forgotten.admit('gone')).toBe(false);
  });

  it('holds no more than two generations however many keys pass', () => {
    const door = new Doorkeeper(1_000);
    for (let i = 0; i < 50_000; i++) door.admit(`/api/v1/articles?section=s${i}`);
    // The newest 1,000 are all remembered; one from long ago is not.
    for (let i = 49_000; i < 50_000; i++) expect(door.admit(`/api/v1/articles?section=s${i}`)).toBe(true);
    expect(door.admit('/api/v1/articles?section=s1')).toBe(false);
  });
});
