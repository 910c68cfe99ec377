import type { AppConfig, LoadConfigOptions } from './app-config.ts';
import { ConfigError, formatProblem } from './errors.ts';
import { loadConfig } from './load-config.ts';

/**
 * For a service's main.ts: loadConfig, or on ConfigError print
 * "Trawl cannot start: invalid configuration" and every problem to stderr, then exit 1.
 */
export function loadConfigOrExit(opts: LoadConfigOptions = {}): AppConfig {
  try {
    return loadConfig(opts);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    exitWithProblems(e);
  }
}

/** Prints a ConfigError the way start-up failures look, and exits 1. */
export function exitWithProblems(e: ConfigError): never {
  const lines = ['Trawl cannot start: invalid configuration'];
  for (const p of e.problems) lines.push(`  - ${formatProblem(p)}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  process.exit(1);
}
