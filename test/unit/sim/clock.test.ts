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

  it('fires thousands of timers, some cancelled and some scheduled as they fire, in time order', async () => {
    const clock = new SimClock(0);
    const rng = new Rng(7);
    const fired: { at: number; id: number }[] = [];
    const handles = [];
    for (let i = 0; i < 2_000; i++) {
      const h = clock.after(rng.int(1_000), `t${i}`, () => {
        fired.push({ at: clock.now(), id: h.id });
        if (h.id % 5 === 0) {
          const child = clock.after(rng.int(50), 'child', () => {
            fired.push({ at: clock.now(), id: child.id });
          });
        }
      });
      handles.push(h);
    }
    const cancelled = new Set(handles.filter((_, i) => i % 7 === 3).map((h) => h.id));
    for (const h of handles) if (cancelled.has(h.id)) clock.cancel(h);
    await clock.advance(2_000);
    expect(fired.some((f) => cancelled.has(f.id))).toBe(false);
    expect(fired.length).toBe(2_000 - cancelled.size + fired.filter((f) => f.id > 2_000).length);
    const sorted = [...fired].sort((a, b) => a.at - b.at || a.id - b.id);
    expect(fired).toEqual(sorted);
    expect(clock.pendingTimers()).toEqual([]);
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
