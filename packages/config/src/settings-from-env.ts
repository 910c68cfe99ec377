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
 * defaults. Problems are written `VARIABLE: message`.
 */
export function settingsReader<T>(
  vars: Readonly<Record<string, string>>,
  schema: SettingsSchema<T>,
): (env: Record<string, string | undefined>) => SettingsResult<T> {
  const byKey = Object.fromEntries(Object.entries(vars).map(([n, k]) => [k, n]));
  return (env) => {
    const input: Record<string, string> = {};
    for (const [name, key] of Object.entries(vars)) {
      const v = env[name];
      if (v !== undefined && v !== '') input[key] = v;
    }
    const r = schema.safeParse(input);
    if (r.success) return { ok: true, value: r.data };
    return {
      ok: false,
      problems: r.error.issues.map((i) => {
        const key = String(i.path[0] ?? '');
        return `${byKey[key] ?? key}: ${i.message}`;
      }),
    };
  };
}
