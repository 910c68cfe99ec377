/**
 * Checks the configuration the way every service does at start-up: exits 1 listing every problem,
 * or prints "configuration ok". `--files` also validates service.yaml and workflows.yaml.
 */
import { ConfigError } from '../errors.ts';
import { exitWithProblems, loadConfigOrExit } from '../load-or-exit.ts';
import { loadServiceFiles } from '../service-files.ts';

const cfg = loadConfigOrExit();
if (process.argv.includes('--files')) {
  try {
    const files = loadServiceFiles(cfg);
    process.stdout.write(`configuration files ok (version ${files.version})\n`);
  } catch (e) {
    if (e instanceof ConfigError) exitWithProblems(e);
    throw e;
  }
}
process.stdout.write('configuration ok\n');
