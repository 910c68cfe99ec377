import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type { JobEvent } from '../src/job-event.ts';

/** The built console (index.html, assets/): what the gateway serves at /. Null when not built. */
export function consoleDistDir(): string | null {
  const dir = fileURLToPath(new URL('../dist/', import.meta.url));
  return existsSync(`${dir}index.html`) ? dir : null;
}
