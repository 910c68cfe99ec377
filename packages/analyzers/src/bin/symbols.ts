import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findRepoRoot } from '@trawl/config';
import { loadEvalConfig } from '../eval/load-config.ts';
import {
  catalogueMarkdown,
  catalogueText,
  replaceGeneratedTable,
  symbolCatalogue,
} from '../symbols-catalogue.ts';

const USAGE = `usage: trawl symbols [--json | --markdown | --write-doc docs/analyzers.md] [--config service.yaml]
  every symbol of the built-in analyzers and of the configured rule file: the score the scorer
  uses (the weights file's override, else the declared score), its group and its reason`;

function main(): number {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean' },
      markdown: { type: 'boolean' },
      config: { type: 'string' },
      'write-doc': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const cfg = loadEvalConfig(findRepoRoot(), {
    ...(values.config ? { service: resolve(values.config) } : {}),
  });
  const c = symbolCatalogue(cfg.service);
  const doc = values['write-doc'];
  if (doc) {
    writeFileSync(doc, replaceGeneratedTable(readFileSync(doc, 'utf8'), catalogueMarkdown(c)));
    process.stdout.write(`symbols: table written to ${doc}\n`);
  } else if (values.json) process.stdout.write(`${JSON.stringify(c, null, 2)}\n`);
  else if (values.markdown) process.stdout.write(`${catalogueMarkdown(c)}\n`);
  else process.stdout.write(`${catalogueText(c)}\n`);
  return 0;
}

try {
  process.exit(main());
} catch (err) {
  process.stderr.write(`symbols: ${(err as Error).message}\n`);
  process.exit(1);
}
