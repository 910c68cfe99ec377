import { fileURLToPath } from 'node:url';

/**
 * The repository (installation) root: relative rule_file and weights_file paths are resolved against
 * it. Relative to this file's own location, like the default lexicons, rules and weights.
 */
export const INSTALL_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
