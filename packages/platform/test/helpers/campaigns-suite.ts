import type { AnalysisResult, Evidence } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, MINHASH_SIZE, signatureSimilarity } from '../../src/index.ts';
import type { LureInput } from '../../src/store/campaign-repository.ts';
import type { Store } from '../../src/store/repositories.ts';
import type { SqlClient } from '../../src/store/types.ts';
import { newJob, sampleResult, sampleTrace } from '../../src/testing/index.ts';

export interface CampaignTarget {
  sql: SqlClient;
  cleanup(): Promise<void>;
}

/** An Email whose subject holds U+0000 (as JSON text: the escape `\u0000`). */
const sampleEmailNul = {
  headers: {
    subject: 'Invoice \u0000 due',
    sender: 'billing@example.com',
    recipients: ['alice@example.org'],
    date: '2024-05-01T10:00:00Z',
  },
  body_text: 'Pay \u0000 now',
};

function evidenceFor(subject: string, to: string[]): Evidence {
  return {
    message: {
      subject,
      from: { address: 'attacker@lure.example' },
      reply_to: [],
      to,
      cc: [],
      bcc: [],
      date: '2026-11-03T10:00:00.000Z',
    },
    received: { hops: [] },
    auth: {
      spf: 'none_seen',
      dkim: 'none_seen',
      dmarc: 'none_seen',
      arc: 'none_seen',
      dkim_pass_domains: [],
      authserv_id: '',
      via_arc: false,
      verified: false,
    },
    urls: [],
    attachments: [],
  };
}

/** A MinHash signature of MINHASH_SIZE values `value(i)` (8 hex digits each). */
function signatureOf(value: (i: number) => number): string {
  return Array.from({ length: MINHASH_SIZE }, (_, i) =>
    value(i).toString(16).padStart(8, '0'),
  ).join('');
}

/** The eight text band keys of a signature, as lureOf makes them. */
function bandKeys(sig: string): string[] {
  return Array.from({ length: 8 }, (_, i) => `txt${i}:${sig.slice(i * 32, i * 32 + 32)}`);
}

/**
 * Campaign store (issue 16, migration 008), in the style of the store conformance suite:
 * PostgreSQL and PGlite must both pass it.
 */
export function campaignsSuite(name: string, makeTarget: () => Promise<CampaignTarget>): void {
  describe(`campaign store: ${name}`, () => {
    let target: CampaignTarget;
    let store: Store;
    beforeAll(async () => {
      target = await makeTarget();
      store = createStore(target.sql);
    }, 180_000);
    afterAll(async () => {
      await target?.cleanup();
    });

    /** The inputs grouped by one assignMany, or by assign one after the other. */
    async function assignAll(mode: 'one' | 'many', inputs: LureInput[]) {
      if (mode === 'many') return store.campaigns.assignMany(inputs);
      const out: Awaited<ReturnType<typeof store.campaigns.assign>>[] = [];
      for (const i of inputs) out.push(await store.campaigns.assign(i));
      return out;
    }

    /** A completed phishing job whose evidence names its subject and recipients. */
    async function finished(subject: string, to: string[], reporter?: string): Promise<string> {
      const j = newJob();
      await store.jobs.create(j);
      const result: AnalysisResult = { ...sampleResult(0.9), evidence: evidenceFor(subject, to) };
      await store.jobs.finish({
        job_id: j.job_id,
        outcome: { status: 'completed', result, trace: sampleTrace },
      });
      if (reporter) {
        await target.sql.query(
          `UPDATE jobs SET origin = jsonb_build_object('report', jsonb_build_object('reporter', $2::text)) WHERE job_id = $1`,
          [j.job_id, reporter],
        );
      }
      return j.job_id;
    }

    it('a job with a lure nobody else has is in no campaign', async () => {
      const a = await finished('alone', ['x@corp.example']);
      expect(
        await store.campaigns.assign({ job_id: a, keys: ['dom:only-one.example'] }),
      ).toBeNull();
      expect(await store.campaigns.forJob(a)).toBeNull();
    });

    it('groups jobs that share a domain, counts recipients and reporters once each', async () => {
      const a = await finished('Invoice overdue', ['alice@corp.example', 'bob@corp.example']);
      const b = await finished('Invoice overdue!', ['Bob@corp.example'], 'Carol@corp.example');
      const c = await finished('Pay now', ['dave@corp.example'], 'carol@corp.example');
      const other = await finished('Other', ['erin@corp.example']);
      expect(
        await store.campaigns.assign({ job_id: a, keys: ['dom:pay-lure.example'] }),
      ).toBeNull();
      const ab = await store.campaigns.assign({
        job_id: b,
        keys: ['dom:pay-lure.example', 'sha:aa'],
      });
      expect(ab?.created).toBe(true);
      expect(ab?.joined.sort()).toEqual([a, b].sort());
      expect(ab?.campaign).toMatchObject({ size: 2, recipients: 2, reporters: 1 });
      const abc = await store.campaigns.assign({ job_id: c, keys: ['sha:aa'] });
      expect(abc?.created).toBe(false);
      expect(abc?.campaign).toMatchObject({ id: ab?.campaign.id, size: 3, recipients: 3 });
      expect(abc?.campaign.reporters).toBe(1);
      expect(
        await store.campaigns.assign({ job_id: other, keys: ['dom:elsewhere.example'] }),
      ).toBeNull();

      const detail = await store.campaigns.get(ab?.campaign.id as string, { limit: 10 });
      expect(detail).toMatchObject({
        size: 3,
        recipients: 3,
        reporters: 1,
        subject: 'Invoice overdue',
        lures: ['attachment', 'domain'],
      });
      expect(detail?.members.map((m) => m.job_id).sort()).toEqual([a, b, c].sort());
      const mb = detail?.members.find((m) => m.job_id === b);
      expect(mb).toMatchObject({
        recipients: ['bob@corp.example'],
        reporter: 'Carol@corp.example',
        is_phishing: true,
        threat_level: 'high',
        status: 'completed',
        matched: 'domain:pay-lure.example',
      });
      // the job search finds the campaign's jobs by `campaign`
      const page = await store.jobs.list({
        limit: 10,
        filters: { terms: [`camp:${ab?.campaign.id}`] },
      });
      expect(page.items.map((j) => j.job_id).sort()).toEqual([a, b, c].sort());
      expect(await store.campaigns.forJob(other)).toBeNull();
    });

    it('a lure holding U+0000 is grouped and read back, its link named as written (issue 28)', async () => {
      // the link `…/auth.php?id=%00x`: decoded for the evidence, it holds U+0000; sent first, it
      // used to make the job's evidence unreadable as JSON, so its lure grouped nothing after it
      const link = 'http://nul-lure.example/auth.php?id=%00x';
      const j = newJob({ email_json: JSON.stringify({ ...sampleEmailNul, analysis_context: {} }) });
      await store.jobs.create(j);
      const evidence: Evidence = {
        ...evidenceFor('Pass\u0000word expiry', ['nul@corp.example']),
        urls: [
          {
            url: link,
            decoded: 'http://nul-lure.example/auth.php?id=\u0000x',
            host: 'nul-lure.example',
            registrable_domain: 'nul-lure.example',
            found_in: 'text',
            element: 'text',
            text: 'lone \ud800 surrogate',
          },
        ],
      };
      const result: AnalysisResult = { ...sampleResult(0.9), evidence };
      await store.jobs.finish({
        job_id: j.job_id,
        outcome: { status: 'completed', result, trace: sampleTrace },
      });
      const b = await finished('Password expiry', ['other@corp.example']);
      expect(
        await store.campaigns.assign({ job_id: j.job_id, keys: ['dom:nul-lure.example'] }),
      ).toBeNull();
      const ab = await store.campaigns.assign({ job_id: b, keys: ['dom:nul-lure.example'] });
      expect(ab?.campaign).toMatchObject({ size: 2, recipients: 2 });
      const detail = await store.campaigns.get(ab?.campaign.id as string, { limit: 10 });
      expect(detail?.members.map((m) => m.job_id).sort()).toEqual([j.job_id, b].sort());
      // the campaign's subject is its first job's, U+0000 shown as text
      expect(detail?.subject).toBe('Pass\\u0000word expiry');
      // the evidence reads back whole: the link as written, U+0000 as the visible text `\u0000`
      const back = (await store.jobs.get(j.job_id))?.result?.evidence;
      expect(back?.urls[0]?.url).toBe(link);
      expect(back?.urls[0]?.decoded).toBe('http://nul-lure.example/auth.php?id=\\u0000x');
      expect(back?.urls[0]?.text).toBe('lone \\ud800 surrogate');
      expect(back?.message.subject).toBe('Pass\\u0000word expiry');
      // the stored Email is JSON the database reads (the reporter notifier reads it so)
      const row = await target.sql.query<{ subject: string }>(
        `SELECT (email::jsonb)->'headers'->>'subject' AS subject FROM jobs WHERE job_id = $1`,
        [j.job_id],
      );
      expect(row.rows[0]?.subject).toBe('Invoice \\u0000 due');
    });

    it('takes the recipients and subject a job comes with, and the stored ones of earlier jobs', async () => {
      const a = await finished('Stored subject', ['alice@corp.example', 'bob@corp.example']);
      const b = await finished('not read', ['nobody@corp.example']);
      expect(await store.campaigns.assign({ job_id: a, keys: ['dom:given.example'] })).toBeNull();
      const ab = await store.campaigns.assign({
        job_id: b,
        keys: ['dom:given.example'],
        recipients: ['Bob@corp.example', 'bob@corp.example', 'Zed@corp.example'],
        subject: 'Given subject',
      });
      // a (lone, read from its stored evidence) and b (as given): alice, bob, zed
      expect(ab?.campaign).toMatchObject({ size: 2, recipients: 3 });
      const detail = await store.campaigns.get(ab?.campaign.id as string, { limit: 10 });
      // the subject of the campaign's first job, read from its stored evidence
      expect(detail?.subject).toBe('Stored subject');
      expect(detail?.members.find((m) => m.job_id === b)?.recipients).toEqual([
        'bob@corp.example',
        'zed@corp.example',
      ]);
      // a campaign started by a job that comes with its subject takes it
      const c = await finished('not read either', ['x@corp.example']);
      const d = await finished('nor this', ['y@corp.example']);
      await store.campaigns.assign({ job_id: c, keys: ['dom:given2.example'], subject: 'C given' });
      await target.sql.query(`UPDATE jobs SET evidence = NULL WHERE job_id = $1`, [c]);
      const cd = await store.campaigns.assign({
        job_id: d,
        keys: ['dom:given2.example'],
        recipients: [],
        subject: 'D given',
      });
      expect(cd?.campaign).toMatchObject({ size: 2, recipients: 0 });
    });

    it('a text band matches only when the whole signatures are alike', async () => {
      const base = signatureOf((i) => 1000 + i);
      // 28 of 32 values equal (one band differs)
      const near = signatureOf((i) => (i < 4 ? 5000 + i : 1000 + i));
      // the first band equal, the rest different: a chance match
      const far = signatureOf((i) => (i < 4 ? 1000 + i : 9000 + i));
      expect(signatureSimilarity(base, near)).toBe(28 / 32);
      expect(signatureSimilarity(base, far)).toBe(4 / 32);
      const a = await finished('Text A', ['t1@corp.example']);
      const b = await finished('Text B', ['t2@corp.example']);
      const c = await finished('Text C', ['t3@corp.example']);
      const keys = bandKeys;
      expect(
        await store.campaigns.assign({ job_id: a, keys: keys(base), signature: base }),
      ).toBeNull();
      expect(
        await store.campaigns.assign({ job_id: c, keys: keys(far), signature: far }),
      ).toBeNull();
      const ab = await store.campaigns.assign({ job_id: b, keys: keys(near), signature: near });
      expect(ab?.joined.sort()).toEqual([a, b].sort());
      expect(await store.campaigns.forJob(c)).toBeNull();
    });

    it('repeated and near-duplicate jobs group as one at a time, each campaign read once a key', async () => {
      /** Signatures of their own per run (`at`: their values' offset). */
      const signatures = (at: number) => ({
        base: signatureOf((i) => at + i),
        // alike base (25 of 32 values) but sharing only its first band whole
        near: signatureOf((i) => (i >= 4 && i % 4 === 0 ? at + 5000 + i : at + i)),
        // base's first band and nothing else: a chance match, as is `other`
        far: signatureOf((i) => (i < 4 ? at + i : at + 6000 + i)),
        other: signatureOf((i) => (i < 4 ? at + i : at + 7000 + i)),
      });
      const s = signatures(0x10000);
      expect(signatureSimilarity(s.base, s.near)).toBe(25 / 32);
      expect(signatureSimilarity(s.base, s.far)).toBe(4 / 32);
      expect(signatureSimilarity(s.far, s.other)).toBe(4 / 32);
      expect(signatureSimilarity(s.near, s.other)).toBe(4 / 32);
      /**
       * f1, f2 (far) and n1 (near) share a domain: one campaign, whose first band holds two
       * signatures. r1…r8 (base, repeated) find it by that band alone, through n1's signature
       * only; g1 (far, a domain of its own) through f1's and f2's; z by chance only.
       */
      const plan = (sig: ReturnType<typeof signatures>): [string, string, string[]][] => [
        ['f1', sig.far, ['dom:x']],
        ['f2', sig.far, ['dom:x']],
        ['n1', sig.near, ['dom:x']],
        ...Array.from({ length: 8 }, (_, i): [string, string, string[]] => [
          `r${i + 1}`,
          sig.base,
          ['dom:rep'],
        ]),
        ['g1', sig.far, ['dom:y']],
        ['z', sig.other, []],
      ];
      async function run(mode: 'one' | 'many') {
        const jobs = plan(signatures(mode === 'one' ? 0x10000 : 0x200000));
        const ids = new Map<string, string>();
        for (const [l] of jobs) ids.set(l, await finished(`Repeated ${l}`, [`${l}@corp.example`]));
        const letterOf = new Map([...ids].map(([l, id]) => [id, l]));
        const inputs = jobs.map(([l, sig, doms]) => ({
          job_id: ids.get(l) as string,
          keys: [...bandKeys(sig), ...doms.map((d) => `${d}-${mode}.example`)],
          signature: sig,
        }));
        const answers = await assignAll(mode, inputs);
        const first = answers.find((a) => a)?.campaign.id;
        return {
          answers: answers.map((a) =>
            a
              ? {
                  first: a.campaign.id === first,
                  size: a.campaign.size,
                  joined: a.joined.map((j) => letterOf.get(j)).sort(),
                  merged: a.merged.length,
                  created: a.created,
                }
              : null,
          ),
          members: await Promise.all(
            jobs.map(async ([l]) => {
              const c = await store.campaigns.forJob(ids.get(l) as string);
              return `${l}:${c ? (c.id === first ? 'first' : c.id) : '-'}:${c?.size ?? 0}`;
            }),
          ),
        };
      }
      const one = await run('one');
      expect(one.members).toEqual([
        ...['f1', 'f2', 'n1', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'g1'].map(
          (l) => `${l}:first:12`,
        ),
        'z:-:0',
      ]);
      expect(one.answers.map((a) => a?.size ?? 0)).toEqual([
        0,
        ...Array.from({ length: 11 }, (_, i) => i + 2),
        0,
      ]);
      expect(one.answers[1]).toMatchObject({ created: true, joined: ['f1', 'f2'] });
      expect(one.answers[3]).toMatchObject({ first: true, created: false, joined: ['r1'] });
      expect(await run('many')).toEqual(one);
    });

    it('a job linking two campaigns merges them into the older one', async () => {
      const a = await finished('M1', ['m1@corp.example']);
      const b = await finished('M2', ['m2@corp.example']);
      const c = await finished('M3', ['m3@corp.example']);
      const d = await finished('M4', ['m4@corp.example']);
      const e = await finished('M5', ['m5@corp.example']);
      await store.campaigns.assign({ job_id: a, keys: ['dom:merge-one.example'] });
      const first = await store.campaigns.assign({ job_id: b, keys: ['dom:merge-one.example'] });
      await store.campaigns.assign({ job_id: c, keys: ['dom:merge-two.example'] });
      const second = await store.campaigns.assign({ job_id: d, keys: ['dom:merge-two.example'] });
      expect(first?.campaign.id).not.toBe(second?.campaign.id);
      const both = await store.campaigns.assign({
        job_id: e,
        keys: ['dom:merge-one.example', 'dom:merge-two.example'],
      });
      expect(both?.campaign).toMatchObject({ id: first?.campaign.id, size: 5, recipients: 5 });
      expect(both?.merged).toEqual([second?.campaign.id]);
      expect(await store.campaigns.get(second?.campaign.id as string, { limit: 5 })).toBeNull();
      expect((await store.campaigns.forJob(c))?.id).toBe(first?.campaign.id);
      const page = await store.jobs.list({
        limit: 10,
        filters: { terms: [`camp:${first?.campaign.id}`] },
      });
      expect(page.items).toHaveLength(5);
      const none = await store.jobs.list({
        limit: 10,
        filters: { terms: [`camp:${second?.campaign.id}`] },
      });
      expect(none.items).toHaveLength(0);
    });

    it('a job deleted by retention leaves its campaign; matching only its keys starts none', async () => {
      const a = await finished('Gone 1', ['g1@corp.example']);
      const b = await finished('Gone 2', ['g2@corp.example']);
      const c = await finished('Gone 3', ['g3@corp.example']);
      await store.campaigns.assign({ job_id: a, keys: ['dom:gone.example'] });
      const ab = await store.campaigns.assign({ job_id: b, keys: ['dom:gone.example'] });
      expect(ab?.campaign.size).toBe(2);
      await target.sql.query('DELETE FROM jobs WHERE job_id = ANY($1::uuid[])', [[a, b]]);
      const detail = await store.campaigns.get(ab?.campaign.id as string, { limit: 10 });
      expect(detail?.members).toEqual([]);
      const x = await finished('Orphan', ['o1@corp.example']);
      expect(
        await store.campaigns.assign({ job_id: x, keys: ['dom:gone-too.example'] }),
      ).toBeNull();
      await target.sql.query('DELETE FROM jobs WHERE job_id = $1', [x]);
      expect(
        await store.campaigns.assign({ job_id: c, keys: ['dom:gone-too.example'] }),
      ).toBeNull();
      expect(await store.campaigns.forJob(c)).toBeNull();
    });

    it('assignMany groups a batch as assign does one job after the other', async () => {
      const letters = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
      const lures: Record<(typeof letters)[number], string[]> = {
        a: ['K1'],
        b: ['K1'],
        c: ['K2'],
        d: ['K2'],
        e: ['K1', 'K2'],
        f: ['K3'],
        g: ['K4', 'K1'],
      };
      /** Answers and final campaigns of the letters, with job ids and campaign ids as letters. */
      async function run(mode: 'one' | 'many') {
        const ids = new Map<string, string>();
        for (const l of letters) ids.set(l, await finished(`Batch ${l}`, [`${l}@corp.example`]));
        const letterOf = new Map([...ids].map(([l, id]) => [id, l]));
        const inputs = letters.map((l) => ({
          job_id: ids.get(l) as string,
          keys: lures[l].map((k) => `dom:${mode}-${k.toLowerCase()}.example`),
        }));
        const answers = await assignAll(mode, inputs);
        const campaignOf = new Map<string, string>();
        for (const l of letters) {
          const c = await store.campaigns.forJob(ids.get(l) as string);
          if (c) campaignOf.set(c.id, campaignOf.get(c.id) ?? l);
        }
        const name = (id: string) =>
          campaignOf.get(id) ?? `gone(${answers.findIndex((a) => a?.campaign.id === id)})`;
        return {
          answers: answers.map((a) =>
            a
              ? {
                  campaign: name(a.campaign.id),
                  size: a.campaign.size,
                  recipients: a.campaign.recipients,
                  joined: a.joined.map((j) => letterOf.get(j)).sort(),
                  merged: a.merged.map(name),
                  created: a.created,
                }
              : null,
          ),
          members: await Promise.all(
            letters.map(async (l) => {
              const c = await store.campaigns.forJob(ids.get(l) as string);
              return c ? `${l}:${campaignOf.get(c.id)}:${c.size}` : `${l}:-`;
            }),
          ),
        };
      }
      const one = await run('one');
      const many = await run('many');
      expect(many).toEqual(one);
      expect(one.members).toEqual(['a:a:6', 'b:a:6', 'c:a:6', 'd:a:6', 'e:a:6', 'f:-', 'g:a:6']);
      expect(one.answers[4]?.merged).toHaveLength(1);
    });

    it('joins of existing campaigns in one batch answer what each job sees one at a time', async () => {
      async function run(mode: 'one' | 'many') {
        const dom = (k: string) => `dom:${mode}-join-${k}.example`;
        const names = new Map<string, string>();
        const job = async (name: string, subject: string, to: string[], reporter?: string) => {
          const id = await finished(subject, to, reporter);
          names.set(id, name);
          return id;
        };
        // campaigns X (subject set) and Z (no subject yet), a lone job L, then the batch
        const x1 = await job('x1', 'Invoice', ['a@corp.example']);
        const x2 = await job('x2', 'Invoice', ['b@corp.example'], 'r1@corp.example');
        const z1 = await job('z1', '', ['z@corp.example']);
        const z2 = await job('z2', '', ['z@corp.example']);
        const l1 = await job('l1', 'Lone', ['l@corp.example'], 'R2@corp.example');
        const y1 = await job('y1', 'Other', ['y@corp.example']);
        const y2 = await job('y2', 'Other', ['y@corp.example']);
        await store.campaigns.assign({ job_id: x1, keys: [dom('x')] });
        await store.campaigns.assign({ job_id: x2, keys: [dom('x')] });
        await store.campaigns.assign({ job_id: z1, keys: [dom('z')] });
        await store.campaigns.assign({ job_id: z2, keys: [dom('z')] });
        await store.campaigns.assign({ job_id: l1, keys: [dom('lone')] });
        await store.campaigns.assign({ job_id: y1, keys: [dom('y')] });
        await store.campaigns.assign({ job_id: y2, keys: [dom('y')] });
        const inputs: LureInput[] = [
          {
            job_id: await job('j1', 'Invoice', ['c@corp.example'], 'r1@corp.example'),
            keys: [dom('x')],
            recipients: ['c@corp.example', 'A@corp.example'],
          },
          { job_id: await job('j2', '', ['z@corp.example']), keys: [dom('z')], subject: '' },
          {
            job_id: await job('j3', 'Invoice', ['d@corp.example'], 'r3@corp.example'),
            keys: [dom('x'), 'sha:' + mode],
            recipients: ['d@corp.example', 'c@corp.example'],
          },
          {
            job_id: await job('j4', 'Pay now', ['z2@corp.example']),
            keys: [dom('z')],
            subject: 'Pay now',
          },
          { job_id: await job('j5', 'Invoice', ['e@corp.example']), keys: [dom('x'), dom('lone')] },
          // assigned before: stays where it is, adds nothing
          { job_id: x1, keys: [dom('x')] },
          {
            job_id: await job('j7', 'Later', ['f@corp.example'], 'R2@corp.example'),
            keys: [dom('z')],
          },
          // links X and Y after joins still to be written: Y is merged into X
          { job_id: await job('j8', 'Invoice', ['g@corp.example']), keys: [dom('x'), dom('y')] },
        ];
        // j1 twice in a row: the second time it is a member already and adds nothing
        inputs.splice(1, 0, { job_id: inputs[0]?.job_id as string, keys: [dom('x')] });
        const answers = await assignAll(mode, inputs);
        const campaignName = new Map<string, string>();
        for (const [id, n] of [
          [x1, 'X'],
          [z1, 'Z'],
        ] as const) {
          const c = await store.campaigns.forJob(id);
          if (c) campaignName.set(c.id, n);
        }
        const details = await Promise.all(
          [x1, z1].map(async (id) => {
            const c = await store.campaigns.forJob(id);
            const d = c ? await store.campaigns.get(c.id, { limit: 50 }) : null;
            return d
              ? {
                  size: d.size,
                  recipients: d.recipients,
                  reporters: d.reporters,
                  subject: d.subject,
                  lures: d.lures,
                  members: d.members
                    .map(
                      (m) =>
                        `${names.get(m.job_id)}:${m.matched.replace(mode, '')}:${m.recipients.join(',')}`,
                    )
                    .sort(),
                }
              : null;
          }),
        );
        return {
          answers: answers.map((a) =>
            a
              ? {
                  campaign: campaignName.get(a.campaign.id),
                  size: a.campaign.size,
                  recipients: a.campaign.recipients,
                  reporters: a.campaign.reporters,
                  joined: a.joined.map((j) => names.get(j)).sort(),
                  merged: a.merged.length,
                  created: a.created,
                }
              : null,
          ),
          details,
        };
      }
      const one = await run('one');
      const many = await run('many');
      expect(many).toEqual(one);
      expect(
        one.answers.map((a) => a && `${a.campaign}:${a.size}:${a.recipients}:${a.reporters}`),
      ).toEqual([
        'X:3:3:1',
        'X:3:3:1',
        'Z:3:1:0',
        'X:4:4:2',
        'Z:4:2:0',
        'X:6:6:3',
        'X:6:6:3',
        'Z:5:3:1',
        'X:9:8:3',
      ]);
      expect(one.details.map((d) => d?.subject)).toEqual(['Invoice', 'Pay now']);
    });

    it('two replicas grouping jobs of one lure at once put them in one campaign', async () => {
      // two stores over one database: two replicas, each with its own keys that matched lately
      const a = store;
      const b = createStore(target.sql);
      for (let round = 0; round < 8; round++) {
        const key = `dom:race-${round}.example`;
        const hint = `dom:race-hint-${round}.example`;
        const ids: string[] = [];
        for (let i = 0; i < 8; i++)
          ids.push(await finished(`Race ${round}`, [`r${i}@corp.example`]));
        const [e0, e1, ...rest] = ids as [string, string, ...string[]];
        // even rounds: replica a has seen `hint` match, so its jobs (holding `hint` and `key`) go to
        // the lock at once; b's jobs hold only `key`, which no earlier job holds
        const hinted = round % 2 === 0;
        if (hinted) {
          await a.campaigns.assign({ job_id: e0, keys: [hint] });
          await a.campaigns.assign({ job_id: e1, keys: [hint] });
        } else {
          rest.push(e0, e1);
        }
        const half = Math.ceil(rest.length / 2);
        await Promise.all([
          a.campaigns.assignMany(
            rest.slice(0, half).map((job_id) => ({ job_id, keys: hinted ? [hint, key] : [key] })),
          ),
          b.campaigns.assignMany(rest.slice(half).map((job_id) => ({ job_id, keys: [key] }))),
        ]);
        const campaigns = new Set<string | undefined>();
        for (const id of ids) campaigns.add((await a.campaigns.forJob(id))?.id);
        expect([...campaigns], `round ${round}`).toHaveLength(1);
        expect([...campaigns][0], `round ${round}`).toBeDefined();
        const c = await a.campaigns.forJob(ids[0] as string);
        expect(c?.size, `round ${round}`).toBe(8);
      }
    });

    it('lists campaigns newest activity first, a page at a time', async () => {
      const p1 = await store.campaigns.list({ limit: 1 });
      expect(p1.items).toHaveLength(1);
      expect(p1.next_cursor).not.toBeNull();
      const p2 = await store.campaigns.list({ limit: 10, cursor: p1.next_cursor as string });
      const all = [...p1.items, ...p2.items];
      expect(all.length).toBeGreaterThanOrEqual(2);
      const seen = all.map((c) => c.last_seen);
      expect([...seen].sort().reverse()).toEqual(seen);
      expect(new Set(all.map((c) => c.id)).size).toBe(all.length);
    });
  });
}
