/** What `npm run bench` hands each of its sections, and what a section gives back. */
export interface BenchContext {
  /**
   * `--full`: the largest worlds too (such as the 50,000-runner sweep). Without it every section
   * runs smaller worlds, so that the whole bench finishes in minutes, and still prints each figure.
   */
  full: boolean;
  /** `--json`: the section's figures go into the one JSON document instead of text on stdout. */
  asJson: boolean;
  /** The command line after `npm run bench --`, for a section's own flags. */
  args: readonly string[];
}

/** A section's figures: the value under its name in the `--json` document. */
export type BenchSection = (context: BenchContext) => Promise<unknown>;

/** The numbers of a `--name=1,2,3` flag, or undefined when it is not given. */
export function listArg(args: readonly string[], name: string): number[] | undefined {
  return args
    .find((a) => a.startsWith(`--${name}=`))
    ?.split('=')[1]
    ?.split(',')
    .map(Number);
}
