import { ApiClient } from './api-client.ts';
import { credentialsPath, normaliseUrl, readCredentials } from './credentials.ts';
import type { CliIo } from './io.ts';

const DEFAULT_URL = 'http://127.0.0.1:8001';

export interface Ctx {
  io: CliIo;
  json: boolean;
  /** Explicit --url, when given. */
  urlFlag: string | undefined;
  api(): ApiClient;
  /** Writes a JSON value to stdout (for --json). */
  printJson(v: unknown): void;
  print(s: string): void;
  /** Notes for humans: stderr, so stdout stays clean for scripts. */
  note(s: string): void;
  sleep(ms: number): Promise<void>;
  now(): number;
}

/** --url, else TRAWL_URL, else the server of the last login, else http://127.0.0.1:8001. */
function resolveUrl(io: CliIo, urlFlag: string | undefined): string {
  if (urlFlag) return normaliseUrl(urlFlag);
  if (io.env.TRAWL_URL) return normaliseUrl(io.env.TRAWL_URL);
  const current = readCredentials(credentialsPath(io.env)).current;
  return current ?? DEFAULT_URL;
}

export function makeCtx(io: CliIo, o: { json: boolean; url: string | undefined }): Ctx {
  let client: ApiClient | undefined;
  return {
    io,
    json: o.json,
    urlFlag: o.url,
    api() {
      client ??= new ApiClient({
        url: resolveUrl(io, o.url),
        credentialsPath: credentialsPath(io.env),
        ...(io.fetch ? { fetch: io.fetch } : {}),
        ...(io.now ? { now: io.now } : {}),
      });
      return client;
    },
    printJson: (v) => io.stdout.write(`${JSON.stringify(v, null, 2)}\n`),
    print: (s) => io.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
    note: (s) => io.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
    sleep: io.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    now: io.now ?? Date.now,
  };
}
