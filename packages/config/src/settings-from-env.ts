import { readFileSync } from 'node:fs';

/** A service's own settings as read from its variables, or the problems, each naming its variable. */
export type SettingsResult<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** The slice of a zod schema settingsFromEnv uses. */
export interface SettingsSchema<T> {
  safeParse(input: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] };
      };
}

/**
 * The reader of a service's settings from variables of its own (TRAWL_IMAP_*, TRAWL_SMTP_*): `vars`
 * maps each variable to its settings key; unset and empty variables are left to the schema's
 * defaults. Problems are written `VARIABLE: message`. Each of `secretFiles` may instead be given as
 * `NAME_FILE`, a file whose content is the value (one trailing newline dropped).
 */
export function settingsReader<T>(
  vars: Readonly<Record<string, string>>,
  schema: SettingsSchema<T>,
  opts: { secretFiles?: readonly string[] } = {},
): (env: Record<string, string | undefined>) => SettingsResult<T> {
  const byKey = Object.fromEntries(Object.entries(vars).map(([n, k]) => [k, n]));
  const secretFiles = new Set(opts.secretFiles ?? []);
  return (env) => {
    const input: Record<string, string> = {};
    const problems: string[] = [];
    for (const [name, key] of Object.entries(vars)) {
      const v = env[name];
      const file = secretFiles.has(name) ? env[`${name}_FILE`] : undefined;
      if (file !== undefined && file !== '') {
        // NAME_FILE: the file's content is the value (Docker and Kubernetes secrets); never quoted.
        if (v !== undefined && v !== '') {
          problems.push(`${name}_FILE: set ${name} or ${name}_FILE, not both`);
          continue;
        }
        try {
          const text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
          if (text.length > 0) input[key] = text;
        } catch (e) {
          problems.push(
            `${name}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
          );
        }
        continue;
      }
      if (v !== undefined && v !== '') input[key] = v;
    }
    const r = schema.safeParse(input);
    if (r.success && problems.length === 0) return { ok: true, value: r.data };
    if (r.success) return { ok: false, problems };
    return {
      ok: false,
      problems: [
        ...problems,
        ...r.error.issues.map((i) => {
          const key = String(i.path[0] ?? '');
          return `${byKey[key] ?? key}: ${i.message}`;
        }),
      ],
    };
  };
}
