import { BadInputError, toProblems } from '@trawl/contracts';
import type { PluginDefinition } from './define.ts';
import { PLUGIN_ERROR_CODES } from './errors.ts';

const cache = new WeakMap<PluginDefinition, WeakMap<object, unknown>>();
/** Stands for "no settings given", so that the defaults are parsed once per plugin. */
const NONE = Object.freeze({});

/**
 * Parses raw settings (from config/service.yaml, the gateway, or nothing) with the plugin's schema:
 * the schema's defaults fill what is missing. Parsed values are cached per raw object, so calling
 * this on every request costs a lookup. Throws BadInputError (TRAWL_ERR_PLUGIN_SETTINGS_INVALID)
 * listing every problem as a JSON pointer into the settings object.
 */
export function resolveSettings<S>(def: PluginDefinition, raw: unknown): S {
  const input = raw ?? NONE;
  const byRaw = typeof input === 'object' ? cache.get(def) : undefined;
  if (byRaw?.has(input as object)) return byRaw.get(input as object) as S;
  const r = def.settings.safeParse(input);
  if (!r.success) {
    const problems = toProblems(r.error, '/settings');
    throw new BadInputError(
      PLUGIN_ERROR_CODES.settingsInvalid,
      `settings of '${def.id}' are invalid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { status: 500, problems },
    );
  }
  if (typeof input === 'object') {
    let m = cache.get(def);
    if (!m) {
      m = new WeakMap();
      cache.set(def, m);
    }
    m.set(input as object, r.data);
  }
  return r.data as S;
}
