/**
 * Regression test for the backtracking regular expressions of the analyzers (issue 15, "Quadratic
 * regexes stall the process"): header values reach them capped at 8,192 characters (50 values per
 * header), HTML at 60,000. Each function is fed long runs of the characters its old pattern read
 * and must answer within a budget that linear work meets by far (each case takes a few milliseconds;
 * the old patterns took from seconds to minutes on the same inputs: 253 s for parseFromHeader on
 * 8 KB of spaces). linear-scans.test.ts checks that the scans give the old answers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { namesMoneyAmount, phoneNumberIn } from '../../src/content/signals.ts';
import { addressRun } from '../../src/directory/lookup.ts';
import { normalizeName, parseFromHeader } from '../../src/directory/names.ts';
import {
  addressInSubject,
  fakeReply,
  generatedLocalPart,
  institutionOffDomain,
  junkSuffix,
  malformedDisplayName,
} from '../../src/headers/bulk-signs.ts';
import { blankBrackets } from '../../src/headers/context.ts';
import { analyzeHeaders, HeadersSettings } from '../../src/headers/index.ts';
import { unfence } from '../../src/llm/answer.ts';
import {
  addressIn,
  angleContent,
  domainOf,
  parseAddressHeader,
} from '../../src/shared/header-values.ts';
import { stripTags } from '../../src/shared/view.ts';
import { makeEmail } from '../fixtures/emails.ts';

const BUDGET_MS = 2000;
/** The length a header value is cut to (shared/header-values.ts). */
const HEADER = 8192;
/** The length HTML is cut to (MAX_SCAN_CHARS). */
const HTML = 60_000;

/** `unit` repeated to about `chars` characters. */
function run(unit: string, chars = HEADER): string {
  return unit.repeat(Math.max(1, Math.floor(chars / unit.length)));
}

function bounded(cases: { name: string; work: () => unknown }[]): void {
  for (const c of cases) {
    it(`${c.name} (under ${BUDGET_MS} ms)`, () => {
      const start = performance.now();
      c.work();
      expect(performance.now() - start).toBeLessThan(BUDGET_MS);
    });
  }
}

describe('directory: From display names', () => {
  bounded([
    { name: 'parseFromHeader: 8 KB of spaces', work: () => parseFromHeader(run(' ')) },
    { name: 'parseFromHeader: spaces then <a>x', work: () => parseFromHeader(`${run(' ')}<a>x`) },
    { name: 'parseFromHeader: < then spaces', work: () => parseFromHeader(`<${run(' ')}`) },
    { name: 'parseFromHeader: 8 KB of <', work: () => parseFromHeader(run('<')) },
    { name: 'normalizeName: 8 KB of (', work: () => normalizeName(run('(')) },
    { name: 'normalizeName: 8 KB of [', work: () => normalizeName(run('[')) },
    { name: 'normalizeName: spaces, a comma, spaces', work: () => normalizeName(run(' ,', 40)) },
    { name: 'normalizeName: 8 KB of spaces then ,', work: () => normalizeName(`${run(' ')},`) },
    { name: 'normalizeName: a, then 8 KB of spaces', work: () => normalizeName(`a,${run(' ')}`) },
    { name: 'addressRun: 8 KB of letters', work: () => addressRun(run('a')) },
    { name: 'addressRun: 8 KB of @', work: () => addressRun(run('@')) },
  ]);
});

describe('shared/header-values: addresses in header values', () => {
  bounded([
    { name: 'parseAddressHeader: 8 KB of letters', work: () => parseAddressHeader(run('a')) },
    { name: 'parseAddressHeader: 8 KB of a.', work: () => parseAddressHeader(run('a.')) },
    { name: 'parseAddressHeader: a@ then dots', work: () => parseAddressHeader(`a@${run('.')}`) },
    { name: 'parseAddressHeader: a@a then .a', work: () => parseAddressHeader(`a@${run('a.')}`) },
    { name: 'parseAddressHeader: < then @', work: () => parseAddressHeader(`<${run('@')}`) },
    { name: 'parseAddressHeader: 8 KB of <@', work: () => parseAddressHeader(run('<@')) },
    { name: 'parseAddressHeader: 8 KB of (', work: () => parseAddressHeader(`a@b.cd ${run('(')}`) },
    { name: 'parseAddressHeader: 8 KB of @a', work: () => parseAddressHeader(run('@a')) },
    { name: 'domainOf: a@ then 8 KB of dots', work: () => domainOf(`a@${run('.')}x`) },
    { name: 'domainOf: a@ then 8 KB of > and ]', work: () => domainOf(`a@${run('>]. ')}x`) },
  ]);
});

describe('headers: From, Subject and List-Id', () => {
  // the lexicons load on first use: not part of the time measured
  beforeAll(() => analyzeHeaders(makeEmail({}), HeadersSettings.parse({})));
  bounded([
    { name: 'angleContent: 8 KB of <', work: () => angleContent(run('<')) },
    { name: 'blankBrackets: 8 KB of [', work: () => blankBrackets(run('[')) },
    { name: 'addressIn: 8 KB of letters', work: () => addressIn(run('a')) },
    { name: 'addressIn: 8 KB of a@', work: () => addressIn(run('a@')) },
    { name: 'junkSuffix: 8 KB of dots then x', work: () => junkSuffix(`${run('.')}x`) },
    { name: 'junkSuffix: a then 8 KB of .. then ABC', work: () => junkSuffix(`a${run('.')}ab`) },
    { name: 'malformedDisplayName: 8 KB of <', work: () => malformedDisplayName(run('<')) },
    { name: 'fakeReply: re then 8 KB of spaces', work: () => fakeReply(`re${run(' ')}x`, []) },
    {
      name: 'generatedLocalPart: a. then 8 KB of digit runs and _ then x',
      work: () => generatedLocalPart(`a.${run('11111111111_')}x@example.org`),
    },
    {
      name: 'generatedLocalPart: a. then digits and dots',
      work: () => generatedLocalPart(`a.${run('1.')}-1@example.org`),
    },
    { name: 'addressInSubject: 8 KB of letters', work: () => addressInSubject(run('a'), '') },
    {
      name: 'analyzeHeaders: hostile From, Subject, List-Id and Reply-To',
      work: () =>
        analyzeHeaders(
          makeEmail({
            // the subject field holds at most 998 characters
            subject: `re${run(' ', 600)}[${run('a', 390)}`,
            headers: {
              from: `${run('a.')} <${run('<')}${run('@')}>`,
              'list-id': run('<'),
              'reply-to': run(' '),
              'return-path': `a@${run('.')}`,
              'list-post': run('<mailto:'),
            },
          }),
          HeadersSettings.parse({}),
        ),
    },
  ]);
});

describe('view and llm', () => {
  bounded([
    { name: 'stripTags: 60,000 <', work: () => stripTags(run('<', HTML)) },
    { name: 'stripTags: 60,000 <a', work: () => stripTags(run('<a', HTML)) },
    {
      name: 'unfence: ``` then 100 KB of spaces then x',
      work: () => unfence(`\`\`\`${run(' ', 100_000)}x`),
    },
    { name: 'unfence: 100 KB of `', work: () => unfence(run('`', 100_000)) },
  ]);
});

describe('call-back numbers, sums of money, institution names, random subject tokens', () => {
  const MB = 1024 * 1024;
  bounded([
    { name: 'phoneNumberIn: 1 MB of digits', work: () => phoneNumberIn(run('1', MB)) },
    { name: 'phoneNumberIn: 1 MB of "555 "', work: () => phoneNumberIn(run('555 ', MB)) },
    { name: 'phoneNumberIn: 1 MB of "+1 (2"', work: () => phoneNumberIn(run('+1 (2', MB)) },
    { name: 'phoneNumberIn: 1 MB of "+44 12 "', work: () => phoneNumberIn(run('+44 12 ', MB)) },
    { name: 'namesMoneyAmount: 1 MB of "1.1"', work: () => namesMoneyAmount(run('1.1', MB)) },
    { name: 'namesMoneyAmount: 1 MB of "us"', work: () => namesMoneyAmount(run('us', MB)) },
    {
      name: 'institutionOffDomain: 8 KB of "bank "',
      work: () => institutionOffDomain(run('bank '), run('a.')),
    },
    { name: 'junkSuffix: 8 KB of "a1"', work: () => junkSuffix(run('a1')) },
    { name: 'junkSuffix: 8 KB of "a1 "', work: () => junkSuffix(run('a1 ')) },
    { name: 'junkSuffix: 8 KB of "#"', work: () => junkSuffix(run('#')) },
  ]);
});
