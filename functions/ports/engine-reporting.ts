/** What the engine reports as it runs: log lines and metrics (Powertools in AWS). */
export interface EngineLog {
  info(message: string, fields?: object): void;
  warn(message: string, fields?: object): void;
}

export interface EngineMetrics {
  count(name: string, dimensions: Record<string, string>): void;
  milliseconds(name: string, dimensions: Record<string, string>, value: number): void;
  /** A share in percent (0–100); reporters without it drop the figure. */
  percent?(name: string, dimensions: Record<string, string>, value: number): void;
}
