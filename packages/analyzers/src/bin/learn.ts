/**
 * `trawl learn`: trains the deployment's classifier from labelled mail, or exports / imports its
 * state, locally against the store (DATABASE_URL, else the embedded PGlite data directory).
 *   trawl learn --phishing PATH --legitimate PATH   folders of .eml, maildirs, mbox files
 *   trawl learn --export FILE | --import FILE | --status
 *   trawl learn --teachers                            who taught it what through feedback
 * (`trawl learn --forget USER` asks the gateway: POST /api/v1/feedback/teachers/USER/forget)
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findRepoRoot, loadConfigOrExit } from '@trawl/config';
import { parseRawEmail } from '@trawl/mail';
import {
  type ClassifierRepository,
  createClassifierRepository,
  createFeedbackRepository,
  createPgClient,
  createPgliteClient,
  migrate,
  type SqlClient,
} from '@trawl/platform';
import { learnMany } from '../classifier/learn.ts';
import { countMessages, messagesOf } from '../classifier/mail-source.ts';
import type { LearnLabel } from '../classifier/model.ts';
import { exportState, importState } from '../classifier/state-file.ts';
import { tokensOf } from '../classifier/tokenize.ts';
import { EVAL_ENVELOPE } from '../eval/eval-message.ts';

const USAGE = `usage: trawl learn --phishing PATH [--phishing PATH …] --legitimate PATH [--legitimate PATH …]
       trawl learn --export FILE | --import FILE | --status
       trawl learn --teachers
  --teachers lists who taught the classifier what through feedback (trawl learn --forget USER, which
  unlearns every label USER gave, asks the server: it needs an admin's sign-in).
  PATH is a folder of .eml files, a maildir or an mbox file. Runs against DATABASE_URL, else the
  embedded data directory (TRAWL_DATA_DIR/pglite); stop \`pnpm start\` first when it uses PGlite.`;

/** Messages written to the store per change. */
const BATCH = 200;

function bar(done: number, total: number, label: string): string {
  const width = 30;
  const f = total ? Math.min(1, done / total) : 1;
  const full = Math.round(f * width);
  return `${label.padEnd(10)} [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${done}/${total}`;
}

async function train(
  store: ClassifierRepository,
  paths: { label: LearnLabel; path: string }[],
): Promise<{ learnt: Record<LearnLabel, number>; failed: number }> {
  const tty = process.stderr.isTTY;
  const learnt: Record<LearnLabel, number> = { phishing: 0, legitimate: 0 };
  let failed = 0;
  for (const { label, path } of paths) {
    const total = await countMessages(path);
    let done = 0;
    let batch: { tokens: number[]; label: LearnLabel }[] = [];
    let shown = -1;
    const show = (force = false) => {
      if (done === shown || !(force || tty || done % 500 === 0)) return;
      shown = done;
      process.stderr.write(`${tty ? '\r' : ''}${bar(done, total, label)}${tty ? '' : '\n'}`);
    };
    for await (const m of messagesOf(path)) {
      try {
        // the date is not a token: a message without one is learnt all the same
        const email = await parseRawEmail(m.raw, {
          envelope: EVAL_ENVELOPE,
          receivedAt: new Date(),
        });
        batch.push({ tokens: tokensOf(email), label });
      } catch {
        failed++;
      }
      done++;
      if (batch.length >= BATCH) {
        await learnMany(store, batch);
        learnt[label] += batch.length;
        batch = [];
      }
      if (done % 20 === 0) show();
    }
    if (batch.length) {
      await learnMany(store, batch);
      learnt[label] += batch.length;
    }
    show(true);
    if (tty) process.stderr.write('\n');
  }
  return { learnt, failed };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      phishing: { type: 'string', multiple: true },
      legitimate: { type: 'string', multiple: true },
      export: { type: 'string' },
      import: { type: 'string' },
      status: { type: 'boolean' },
      teachers: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const modes = [
    values.phishing?.length || values.legitimate?.length ? 'train' : '',
    values.export ? 'export' : '',
    values.import ? 'import' : '',
    values.status ? 'status' : '',
    values.teachers ? 'teachers' : '',
  ].filter(Boolean);
  if (values.help || modes.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const root = findRepoRoot();
  const cfg = loadConfigOrExit({
    rootDir: root,
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  let sql: SqlClient;
  if (cfg.database.explicit) {
    sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-learn', max: 2 });
  } else {
    const dir = join(cfg.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    sql = await createPgliteClient({ dataDir: dir });
  }
  try {
    await migrate(sql);
    const store = createClassifierRepository(sql);
    const out = (o: Record<string, unknown>, text: string) =>
      process.stdout.write(values.json ? `${JSON.stringify(o)}\n` : `${text}\n`);
    if (values.export) {
      const h = await exportState(store, resolve(values.export));
      out(
        { exported: values.export, ...h },
        `exported state version ${h.version} (${h.phishing_messages} phishing, ${h.ham_messages} legitimate messages, ${h.tokens} tokens) to ${values.export}`,
      );
    } else if (values.import) {
      const t = await importState(store, resolve(values.import));
      out(
        { imported: values.import, ...t },
        `imported ${values.import}: state version ${t.version}, ${t.phishing} phishing and ${t.ham} legitimate messages`,
      );
    } else if (values.teachers) {
      const teachers = await createFeedbackRepository(sql).teachers();
      const t = await store.totals();
      const documents = t.phishing + t.ham;
      const share = (n: number) => (documents > 0 ? n / documents : 0);
      const rows = teachers.map((x) => ({
        ...x,
        share: share(x.learned.phishing + x.learned.legitimate),
      }));
      const lines = rows.map(
        (x) =>
          `${x.user.padEnd(24)} learnt ${x.learned.phishing} phishing, ${x.learned.legitimate} legitimate ` +
          `(${(x.share * 100).toFixed(1)}%); held ${x.held.outvoted} outvoted, ${x.held.capped} capped; ` +
          `${x.forgotten} forgotten`,
      );
      out(
        { documents, teachers: rows },
        `${documents} documents learnt in all${lines.length ? `\n${lines.join('\n')}` : '; no feedback'}`,
      );
    } else if (values.status) {
      const t = await store.totals();
      out(
        { ...t },
        `state version ${t.version} (tokeniser ${t.tokenizer || '—'}): ${t.phishing} phishing and ${t.ham} legitimate messages learnt`,
      );
    } else {
      const paths = [
        ...(values.phishing ?? []).map((p) => ({ label: 'phishing' as const, path: resolve(p) })),
        ...(values.legitimate ?? []).map((p) => ({
          label: 'legitimate' as const,
          path: resolve(p),
        })),
      ];
      const r = await train(store, paths);
      const t = await store.totals();
      out(
        { learnt: r.learnt, unreadable: r.failed, totals: t },
        `learnt ${r.learnt.phishing} phishing and ${r.learnt.legitimate} legitimate messages${r.failed ? ` (${r.failed} unreadable, skipped)` : ''}; state version ${t.version}: ${t.phishing} phishing and ${t.ham} legitimate in all`,
      );
    }
    return 0;
  } finally {
    await sql.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const e = err as { code?: string; message?: string };
    process.stderr.write(
      `learn failed: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}\n`,
    );
    process.exit(1);
  },
);
