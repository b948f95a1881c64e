import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../../src/lib/turn-queue.js';

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnQueue', () => {
  it('drains the items of one turn of the event loop together, in order, when the turn ends', async () => {
    const drained: number[][] = [];
    const queue = new TurnQueue<number>((items) => drained.push(items));
    queue.push(1);
    queue.push(2);
    queue.push(3);
    expect([drained, queue.isEmpty]).toEqual([[], false]);
    await endOfTurn();
    expect([drained, queue.isEmpty]).toEqual([[[1, 2, 3]], true]);
    queue.push(4);
    await endOfTurn();
    expect(drained).toEqual([[1, 2, 3], [4]]);
  });

  it('drains at once on flush, never twice and never an empty list', async () => {
    const drained: string[][] = [];
    const queue = new TurnQueue<string>((items) => drained.push(items));
    const { flush } = queue;
    queue.push('a');
    flush();
    expect([drained, queue.isEmpty]).toEqual([[['a']], true]);
    flush();
    await endOfTurn();
    expect(drained).toEqual([['a']]);
    // Pushed again in the same turn after a flush: drained at the end of the turn as usual.
    queue.push('b');
    await endOfTurn();
    expect(drained).toEqual([['a'], ['b']]);
  });
});
