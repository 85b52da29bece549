import { SimClock } from '../../../sim/clock.js';
import { Rng } from '../../../sim/rng.js';

describe('SimClock', () => {
  it('fires timers in time order, ties in scheduling order, and only when due', async () => {
    const clock = new SimClock(1_000);
    const fired: string[] = [];
    clock.after(500, 'b', () => void fired.push(`b@${clock.now()}`));
    clock.after(100, 'a', () => void fired.push(`a@${clock.now()}`));
    clock.after(500, 'c', () => void fired.push(`c@${clock.now()}`));

    await clock.advance(499);
    expect(fired).toEqual(['a@1100']);

    await clock.advance(1);
    expect(fired).toEqual(['a@1100', 'b@1500', 'c@1500']);
    expect(clock.now()).toBe(1_500);
  });

  it('runs timers that callbacks schedule within the same advance', async () => {
    const clock = new SimClock(0);
    const fired: number[] = [];
    clock.after(10, 'first', () => {
      fired.push(clock.now());
      clock.after(10, 'second', () => void fired.push(clock.now()));
    });
    await clock.advance(25);
    expect(fired).toEqual([10, 20]);
  });

  it('drops cancelled timers and refuses to go backwards', async () => {
    const clock = new SimClock(0);
    const fired: string[] = [];
    const handle = clock.after(5, 'x', () => void fired.push('x'));
    clock.cancel(handle);
    await clock.advance(10);
    expect(fired).toEqual([]);
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
  });
});

describe('Rng', () => {
  it('gives the same sequence for the same seed and another for another seed', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const seqA = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
