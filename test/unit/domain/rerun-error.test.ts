import { rerunRefusal } from '../../../functions/domain/classify/rerun-error.js';

describe('rerunRefusal', () => {
  it.each([
    [403, 'This workflow is already running', 'retry-later'],
    [403, 'Unable to retry this workflow run because it was created over a month ago', 'gave-up'],
    [403, 'This workflow run cannot be retried', 'gave-up'],
    [422, 'Bad request - Runner "x" is still running a job', 'retry-later'],
    [500, 'Server Error', 'error'],
  ])('%d %s → %s', (status, message, expected) => {
    expect(rerunRefusal(status, message)).toBe(expected);
  });
});
