import { readFileSync } from 'node:fs';
import { findRepoRoot } from '@trawl/config';
import { describe, expect, it } from 'vitest';
import { loadEvalConfig } from '../../src/eval/load-config.ts';
import { GROUPS } from '../../src/shared/symbols.ts';
import {
  catalogueMarkdown,
  replaceGeneratedTable,
  symbolCatalogue,
} from '../../src/symbols-catalogue.ts';

const root = findRepoRoot();
const cfg = loadEvalConfig(root, {
  service: `${root}/config/defaults/service.yaml`,
  workflows: `${root}/config/defaults/workflows.yaml`,
});

describe('symbol catalogue', () => {
  const c = symbolCatalogue(cfg.service);

  it('declares a score, a known group and a reason for every symbol', () => {
    expect(c.symbols.length).toBeGreaterThan(80);
    for (const s of c.symbols) {
      expect(s.reason.length, s.symbol).toBeGreaterThan(10);
      if (s.group) expect(Object.keys(GROUPS), s.symbol).toContain(s.group);
      expect(Number.isFinite(s.score)).toBe(true);
    }
  });

  it('gives weight to the symbols the old fitted file left at 0', () => {
    const score = (id: string) => c.symbols.find((s) => s.symbol === id)?.score ?? 0;
    for (const id of [
      'rules.link-to-raw-ip-with-login',
      'urls.brand_link_text_mismatch',
      'content.combo_bonus',
      'urls.lookalike',
    ])
      expect(score(id), id).toBeGreaterThan(0);
  });

  it('negative scores are only in groups that bound them', () => {
    for (const s of c.symbols.filter((x) => x.score < 0)) {
      const g = GROUPS[s.group as keyof typeof GROUPS];
      expect(g, s.symbol).toBeDefined();
      // standing may lower a message below its other evidence, and so may the learnt classifier,
      // by at most 0.5: words that look legitimate can be written by an attacker (good-word
      // padding), so its ham side stays small (docs/analyzers.md#classifier-learnt-per-deployment)
      if (s.group === 'learned') expect(g.min, s.symbol).toBeGreaterThanOrEqual(-0.5);
      // the organisation's allow list: its own decision, that never excuses a threat-feed listing
      // or a payload (issue 32) and counts a sender only when it authenticated
      else if (s.group === 'org_allow')
        expect([...(GROUPS.org_allow.yields_to ?? [])].sort()).toEqual([
          'org_block',
          'payload',
          'threat_intel',
        ]);
      else if (s.group !== 'standing') expect(g.min, s.symbol).toBe(0);
    }
  });

  it('docs/analyzers.md holds the generated table (pnpm trawl symbols --write-doc docs/analyzers.md)', () => {
    const doc = readFileSync(`${root}/docs/analyzers.md`, 'utf8');
    expect(replaceGeneratedTable(doc, catalogueMarkdown(c))).toBe(doc);
  });
});
