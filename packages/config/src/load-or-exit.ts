import type { AppConfig, LoadConfigOptions } from './app-config.ts';
import { ConfigError, formatProblem } from './errors.ts';
import { loadConfig } from './load-config.ts';
import type { SettingsResult } from './settings-from-env.ts';

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

/**
 * For a service that reads its own settings in main.ts: exits as exitWithProblems does with the
 * problems its settings reader answered, written `path: message`.
 */
function exitOnSettingsProblems(problems: readonly string[]): never {
  exitWithProblems(
    new ConfigError(
      problems.map((p) => {
        const [path, ...rest] = p.split(': ');
        return { path: path ?? '', message: rest.join(': ') };
      }),
    ),
  );
}

/**
 * A retriever holds its own credential, never the platform key (docs/security.md): with that one
 * it could speak for every other retriever and read every plugin's settings. Exits when it has it.
 */
function refusePlatformKeyForRetriever(cfg: Pick<AppConfig, 'internalApiKey'>): void {
  if (!cfg.internalApiKey) return;
  exitWithProblems(
    new ConfigError([
      {
        path: 'INTERNAL_API_KEY',
        message:
          'the platform key must not be given to a retriever: set TRAWL_RETRIEVER_KEY to its own credential (trawl credentials retriever <name>) instead',
      },
    ]),
  );
}

/**
 * For a retriever's main.ts: its own settings, read from this process's environment by `read`
 * (exits listing the problems), once it is sure the retriever does not hold the platform key.
 */
export function retrieverSettingsOrExit<T>(
  cfg: Pick<AppConfig, 'internalApiKey'>,
  read: (env: Record<string, string | undefined>) => SettingsResult<T>,
): T {
  const settings = read(process.env);
  if (!settings.ok) exitOnSettingsProblems(settings.problems);
  refusePlatformKeyForRetriever(cfg);
  return settings.value;
}
