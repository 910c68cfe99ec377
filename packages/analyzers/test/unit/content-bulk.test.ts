import { describe, expect, it } from 'vitest';
import { insertedNoise } from '../../src/content/analyzer.ts';
import { analyzeContent, ContentSettings } from '../../src/content/index.ts';
import { makeEmail } from '../fixtures/emails.ts';

const settings = ContentSettings.parse({});
const symbols = (e: ReturnType<typeof makeEmail>) =>
  (analyzeContent(e, settings).analyzer_details?.symbols as string[]) ?? [];

describe('content: bulk-mail signs', () => {
  it('finds a junk token stuffed into words', () => {
    const t =
      'To see your Stat9R4ZET0AYQem9R4ZET0AYQent, please dow9R4ZET0AYQnlo9R4ZET0AYQad the fi9R4ZET0AYQle';
    expect(insertedNoise(t)).toBe('9R4ZET0AYQ');
    expect(symbols(makeEmail({ text: t }))).toContain('inserted_noise');
  });
  it('does not take product codes or CamelCase for stuffing', () => {
    const t =
      'The MacBookPro2019 and the iPhone12Pro are on sale; order ref aXK9P2QZ1b, see myAPI2ClientLib and myAPI2ClientLib docs';
    expect(insertedNoise(t)).toBeUndefined();
  });
  it('finds text pushed far off screen', () => {
    const html =
      '<style>.belowView { margin-top: 470500px; }</style><p>Hello</p><div class="belowView">filler</div>';
    expect(symbols(makeEmail({ html }))).toContain('hidden_text');
  });
  it('does not flag an ordinary hidden preheader', () => {
    const html =
      '<div style="display:none;max-height:0;overflow:hidden">Your weekly digest</div><p>Hello team, the notes are attached.</p>';
    expect(symbols(makeEmail({ html }))).not.toContain('hidden_text');
  });
  it('finds money or a discount in the subject', () => {
    expect(symbols(makeEmail({ subject: 'Appliance coverage for $1/Day' }))).toContain(
      'subject_money',
    );
    expect(symbols(makeEmail({ subject: 'Your balance: 1.3426 BTC' }))).toContain('subject_money');
    expect(symbols(makeEmail({ subject: '20% für dich auf alles' }))).toContain('subject_money');
    expect(symbols(makeEmail({ subject: 'Minutes of Tuesday, room 4' }))).not.toContain(
      'subject_money',
    );
  });
  it('reports category symbols with a hit-count bucket', () => {
    const s = symbols(makeEmail({ subject: 'Act now', text: 'Act now, urgent, immediately.' }));
    expect(s.some((x) => /^urgency_[123]$/.test(x))).toBe(true);
    expect(s).toContain('subject_urgency');
  });
});
