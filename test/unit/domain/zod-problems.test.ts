import { z } from 'zod';
import {
  problemLines,
  problemPaths,
  problemText,
  zodProblems,
} from '../../../functions/domain/model/zod-problems.js';

const schema = z
  .object({ name: z.string(), rules: z.object({ budget: z.number() }).strict() })
  .strict();
const errorOf = (value: unknown): z.ZodError => {
  const r = schema.safeParse(value);
  if (r.success) throw new Error('expected a problem');
  return r.error;
};

describe('zod-problems: the one zod error formatter', () => {
  const error = errorOf({ name: 1, rules: { budget: 'two', typo: 1, other: 2 }, colour: 'x' });

  it('names every problem by its key path, each unknown key as itself', () => {
    expect(zodProblems(error).map((p) => p.path)).toEqual([
      'name',
      'rules.budget',
      'rules.typo',
      'rules.other',
      'colour',
    ]);
    expect(zodProblems(error).filter((p) => p.message === 'unknown key')).toHaveLength(3);
  });

  it('a prefix, one line a problem, and all of them on one line', () => {
    const lines = problemLines(error, 'policy.');
    expect(lines[2]).toBe('policy.rules.typo: unknown key');
    expect(problemText(error)).toBe(problemLines(error).join('; '));
  });

  it('the value itself is (root); paths alone come sorted and once each, echoing no value', () => {
    expect(problemLines(errorOf('secret-value'))).toEqual([expect.stringMatching(/^\(root\): /)]);
    expect(
      problemPaths(errorOf({ name: 'secret-value', rules: { budget: 'x', a: 1, b: 2 } })),
    ).toEqual(['rules.a', 'rules.b', 'rules.budget']);
    expect(problemPaths(errorOf({ rules: {} })).join()).not.toContain('secret');
  });
});
