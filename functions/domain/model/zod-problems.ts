import type { z } from 'zod';

/** One thing wrong with a value, named by its key path (`(root)` for the value itself). */
export interface Problem {
  path: string;
  message: string;
}

/**
 * Every problem zod found, one per key path: an unknown key is reported as itself
 * (`rules.retry.typo: unknown key`), so a reader can find it in their document.
 */
export function zodProblems(error: z.ZodError, prefix = ''): Problem[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    const at = (keys: string[]) => prefix + (keys.length > 0 ? keys.join('.') : '(root)');
    if (issue.code === 'unrecognized_keys' && issue.keys.length > 0)
      return issue.keys.map((key) => ({ path: at([...path, key]), message: 'unknown key' }));
    return [{ path: at(path), message: issue.message }];
  });
}

/** `path: message`, one line a problem. */
export const problemLines = (error: z.ZodError, prefix = ''): string[] =>
  zodProblems(error, prefix).map((p) => `${p.path}: ${p.message}`);

/** Every problem on one line, `; ` between them: for a parser's reason. */
export const problemText = (error: z.ZodError, prefix = ''): string =>
  problemLines(error, prefix).join('; ');

/** The key paths that are wrong, each once, sorted: for errors that must not echo values. */
export const problemPaths = (error: z.ZodError): string[] =>
  [...new Set(zodProblems(error).map((p) => p.path))].sort();
