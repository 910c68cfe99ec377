/** What a command may touch: injected so tests run it in-process. */
export interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
}

/** The CLI's standard streams and environment, passed in so tests can give their own. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: Out;
  stderr: Out;
  /** Reads all of standard input (for `-` and --password-stdin). */
  readStdin(): Promise<Buffer>;
  /** Reads a file as bytes (never parsed by the CLI). */
  readFile(path: string): Promise<Buffer>;
  /** The entries of a folder; null when `path` is not a folder (trawl analyze takes folders). */
  listDir?(path: string): Promise<{ name: string; dir: boolean }[] | null>;
  cwd: string;
  fetch?: typeof fetch;
  /** Starts a child process and answers its exit code (for `trawl eval`). */
  spawn?(cmd: string, args: string[], opts: { cwd: string }): Promise<number>;
  sleep?(ms: number): Promise<void>;
  now?(): number;
}
