import { type ParseArgsConfig, parseArgs } from 'node:util';
import { errorText } from '@trawl/contracts';
import { listsAdd, listsList, listsRemove, passwd } from './commands/account.ts';
import { analyze, analyzeMany } from './commands/analyze.ts';
import { audit } from './commands/audit.ts';
import { backup } from './commands/backup.ts';
import { campaigns } from './commands/campaigns.ts';
import { configReload, configShow } from './commands/config.ts';
import { credentialsCommand } from './commands/credentials.ts';
import { evalCommand, symbolsCommand } from './commands/eval.ts';
import { feedbackCommand } from './commands/feedback.ts';
import { JOB_FILTER_FLAGS, job, jobs } from './commands/jobs.ts';
import { learnCommand, learnForgetCommand } from './commands/learn.ts';
import { login } from './commands/login.ts';
import { quarantineList, quarantineRelease } from './commands/quarantine.ts';
import { usersAdd, usersList, usersSetDisabled } from './commands/users.ts';
import {
  webhooksAdd,
  webhooksDeliveries,
  webhooksList,
  webhooksRemove,
} from './commands/webhooks.ts';
import { workflowsDryRun, workflowsList, workflowsValidate } from './commands/workflows.ts';
import { type Ctx, makeCtx } from './context.ts';
import { CliError, usageError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import type { CliIo } from './io.ts';

/** The CLI's usage text (`trawl --help`). */
export const USAGE = `trawl: command line of the Trawl phishing-analysis platform

usage: trawl <command> [options]

  login [--user NAME] [--password-stdin]       get a token (kept in $XDG_CONFIG_HOME/trawl)
  analyze <file|folder|mbox…|-> [--workflow ID] [--wait] [--timeout S] [--report]
                                               submit messages (.eml, Outlook .msg, mbox,
                                               folders); --wait shows the verdict(s) (several
                                               messages: a progress bar and a summary table);
                                               --report: each is a user's report, its
                                               forwarded original is analysed
  jobs [--status S] [filters] [--limit N] [--cursor C]
                                               list / search jobs, newest first; filters:
                                               --phishing|--clean --threat L --action A
                                               --sender ADDR|DOMAIN --recipient ADDR|DOMAIN
                                               --subject WORDS --url-domain D --sha256 H
                                               --indicator TYPE --workflow ID --submitter U
                                               --since T --until T --email-id ID
                                               --campaign ID --reporter ADDR
                                               --feedback phishing|legitimate|none|disagrees
  job <id>                                     one job with its verdict and stage trace
  feedback <job_id> phishing|legitimate [--note TEXT]
                                               your verdict on a completed job (analyst); it
                                               trains the classifier; a second one replaces it
  quarantine list [--job ID]                   messages the SMTP filter quarantined
  quarantine release <id>                      deliver one to its recipients, once (analyst)
  workflows list                               the configured workflows
  workflows validate <file.yaml>               check workflows against the server
  workflows dry-run <id> <file.eml>            run a workflow now, store nothing
  config show | reload                         configuration version / reload the files (admin)
  users add <name> --role R [--role R] [--password-stdin] | list      (admin)
  users disable <name> | enable <name>         stop / allow an account's logins and tokens (admin)
  passwd [--password-stdin]                    change your own password (stdin: the current one,
                                               then the new one, a line each); logs in again
  lists ls [--list allow|block] [--kind K]     the allow and block list entries (analyst, admin)
  lists add allow|block <kind> <value> [--note N] [--expires T]
                                               add an entry (admin); kinds: sender,
                                               sender_domain, url_host, sha256
  lists rm <id>                                remove an entry (admin)
  campaigns [<id>] [--limit N] [--cursor C]    campaigns (messages sharing a lure), newest
                                               activity first; one: its members, recipients,
                                               verdicts
  webhooks list | rm <id>                      webhook endpoints (admin)
  webhooks add <url> --event E [--event E…] [--description D]
                                               register one; its signing secret is shown once
  webhooks deliveries <id> [--limit N] [--cursor C]
                                               its delivery log: every attempt, newest first
  audit [--limit N] [--action A] [--actor U] [--cursor C]
                                               the audit log, newest first (admin)
  audit --verify                               check the audit log's hash chain (exit 1: broken)
  backup                                       online backup of the embedded database (admin)
  credentials plugin|retriever|service <id> [--key-stdin]
                                               a party's own credential, derived from
                                               INTERNAL_API_KEY (no server is asked)
  eval <dir> [<dir>…] [options of pnpm eval]  offline evaluation on phishing/ and ham/ folders
  symbols [--json | --markdown]                every symbol: score, group, reason
  learn --phishing PATH --legitimate PATH | --export FILE | --import FILE | --status
                                               train / export / import the learnt classifier
                                               (.eml folders, maildir, mbox; local store)
  learn --teachers                             who taught it what through feedback (local store)
  learn --forget USER                          unlearn every feedback label USER gave (server,
                                               admin; audited)

global options:
  --url URL    server (default: TRAWL_URL, else the last login, else http://127.0.0.1:8001)
  --json       machine-readable output on stdout
  -h, --help   this text

exit codes: 0 ok, 1 error, 2 usage, 3 not logged in / not allowed,
            10 analyze --wait: the verdict is phishing
`;

const GLOBAL = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** The options of a paged list: `--limit N --cursor C`. */
const PAGING = {
  limit: { type: 'string' },
  cursor: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({
      args,
      options: { ...GLOBAL, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

function want(positionals: string[], n: number, what: string): void {
  if (positionals.length < n) throw usageError(`missing ${what}`);
  if (positionals.length > n) throw usageError(`unexpected argument ${positionals[n]}`);
}

/** The context of a command, from its global options (--json, --url). */
function ctxOf(io: CliIo, values: { json?: boolean | undefined; url?: string | undefined }) {
  return makeCtx(io, { json: !!values.json, url: values.url });
}

/** A repeatable option's values, each of which may be a comma-separated list: `--role a,b --role c`. */
function listOf(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).filter(Boolean);
}

/** A sub-command: how many arguments it takes, what they are (for the error), what it runs. */
type Sub = [n: number, what: string, run: (args: string[]) => Promise<number>];

/** A sub-command that takes no argument. */
const noArgs = (run: () => Promise<number>): Sub => [0, '', run];
/** A sub-command that takes one argument, `what`. */
const oneArg = (what: string, run: (arg: string) => Promise<number>): Sub => [
  1,
  what,
  (a) => run(a[0] as string),
];

/** Runs the sub-command `positionals[0]` names with the arguments after it; `usage` when none does. */
async function subcommand(
  positionals: string[],
  usage: string,
  subs: Record<string, Sub>,
): Promise<number> {
  const [sub, ...args] = positionals;
  const found = sub !== undefined && Object.hasOwn(subs, sub) ? subs[sub] : undefined;
  if (!found) throw usageError(usage);
  const [n, what, runSub] = found;
  want(args, n, what);
  return await runSub(args);
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parse<O>>;
/** A command: runs on the arguments after its name. */
type Command = (rest: string[], io: CliIo) => Promise<number>;

/**
 * A command with its own options besides the global ones: parses them (a usage error when they are
 * off), answers `--help`, else runs `body` with the context of the global options.
 */
function command<O extends Options>(
  options: O,
  body: (values: Parsed<O>['values'], positionals: string[], ctx: Ctx) => Promise<number>,
): Command {
  return async (rest, io) => {
    const { values, positionals } = parse(rest, options);
    const global = values as { help?: boolean; json?: boolean; url?: string };
    if (global.help) return help(io);
    return await body(values, positionals, ctxOf(io, global));
  };
}

/** A command that takes no option of its own and exactly `n` arguments, `what`. */
const fixed = (n: number, what: string, body: (args: string[], ctx: Ctx) => Promise<number>) =>
  command({}, (_values, positionals, ctx) => {
    want(positionals, n, what);
    return body(positionals, ctx);
  });

/** A local command (no server; no --json): its arguments are its own. */
const local =
  (body: (rest: string[], ctx: Ctx) => Promise<number>): Command =>
  (rest, io) =>
    body(rest, makeCtx(io, { json: false, url: undefined }));

const COMMANDS: Record<string, Command> = {
  login: command(
    { user: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    (v, p, ctx) => {
      want(p, 0, '');
      return login(ctx, { user: v.user, passwordStdin: !!v['password-stdin'] });
    },
  ),
  analyze: command(
    {
      workflow: { type: 'string' },
      wait: { type: 'boolean' },
      timeout: { type: 'string' },
      report: { type: 'boolean' },
    },
    async (values, positionals, ctx) => {
      if (positionals.length === 0)
        throw usageError('missing the message file(s) (or - for standard input)');
      const timeoutSeconds = Number(values.timeout ?? 300);
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
        throw usageError('--timeout must be a positive number of seconds');
      const common = {
        workflow: values.workflow,
        wait: !!values.wait,
        timeoutSeconds,
        report: !!values.report,
      };
      if (positionals.length > 1) return await analyzeMany(ctx, { files: positionals, ...common });
      return await analyze(ctx, { file: positionals[0] as string, ...common });
    },
  ),
  jobs: command(
    {
      status: { type: 'string' },
      ...PAGING,
      phishing: { type: 'boolean' },
      clean: { type: 'boolean' },
      ...Object.fromEntries(JOB_FILTER_FLAGS.map((f) => [f, { type: 'string' as const }])),
    },
    async (values, positionals, ctx) => {
      want(positionals, 0, '');
      const v = values as Record<string, string | boolean | undefined>;
      const filters: Record<string, string> = {};
      for (const f of JOB_FILTER_FLAGS) if (typeof v[f] === 'string') filters[f] = v[f] as string;
      return await jobs(ctx, {
        status: values.status,
        limit: Number(values.limit ?? 20),
        cursor: values.cursor,
        filters,
        phishing: values.phishing ? true : values.clean ? false : undefined,
      });
    },
  ),
  job: fixed(1, 'the job id', ([id], ctx) => job(ctx, id as string)),
  workflows: command({}, (_values, positionals, ctx) =>
    subcommand(
      positionals,
      'workflows: use list, validate <file.yaml> or dry-run <id> <file.eml>',
      {
        list: noArgs(() => workflowsList(ctx)),
        validate: oneArg('the workflows YAML file', (file) => workflowsValidate(ctx, file)),
        'dry-run': [
          2,
          'the workflow id and the message file',
          (a) => workflowsDryRun(ctx, a[0] as string, a[1] as string),
        ],
      },
    ),
  ),
  config: fixed(1, 'show or reload', async ([what], ctx) => {
    if (what === 'show') return await configShow(ctx);
    if (what === 'reload') return await configReload(ctx);
    throw usageError('config: use show or reload');
  }),
  users: command(
    { role: { type: 'string', multiple: true }, 'password-stdin': { type: 'boolean' } },
    (values, positionals, ctx) => {
      const setDisabled = (disabled: boolean) =>
        oneArg('the user name', (name) => usersSetDisabled(ctx, name, disabled));
      const roles = listOf(values.role);
      const passwordStdin = !!values['password-stdin'];
      return subcommand(
        positionals,
        'users: use add <name> --role R, list, disable <name> or enable <name>',
        {
          list: noArgs(() => usersList(ctx)),
          add: oneArg('the user name', (name) => usersAdd(ctx, { name, roles, passwordStdin })),
          disable: setDisabled(true),
          enable: setDisabled(false),
        },
      );
    },
  ),
  quarantine: command({ job: { type: 'string' } }, (values, positionals, ctx) =>
    subcommand(positionals, 'quarantine: use list [--job ID] or release <id>', {
      list: noArgs(() => quarantineList(ctx, { job: values.job })),
      release: oneArg('the quarantined message id', (id) => quarantineRelease(ctx, id)),
    }),
  ),
  passwd: command({ 'password-stdin': { type: 'boolean' } }, (values, positionals, ctx) => {
    want(positionals, 0, '');
    return passwd(ctx, { passwordStdin: !!values['password-stdin'] });
  }),
  lists: command(
    {
      list: { type: 'string' },
      kind: { type: 'string' },
      note: { type: 'string' },
      expires: { type: 'string' },
    },
    (values, positionals, ctx) => {
      const { note, expires } = values;
      return subcommand(
        positionals,
        'lists: use ls, add allow|block <kind> <value> [--note N] [--expires T] or rm <id>',
        {
          ls: noArgs(() => listsList(ctx, { list: values.list, kind: values.kind })),
          add: [
            3,
            'the list (allow or block), the kind and the value',
            ([list, kind, value]) =>
              listsAdd(ctx, {
                list: list as string,
                kind: kind as string,
                value: value as string,
                note,
                expires,
              }),
          ],
          rm: oneArg('the entry id', (id) => listsRemove(ctx, id)),
        },
      );
    },
  ),
  feedback: command({ note: { type: 'string' } }, (values, positionals, ctx) => {
    want(positionals, 2, 'the job id and the verdict (phishing or legitimate)');
    const [jobId, verdict] = positionals as [string, string];
    return feedbackCommand(ctx, { jobId, verdict, note: values.note });
  }),
  webhooks: command(
    {
      event: { type: 'string', multiple: true },
      description: { type: 'string' },
      ...PAGING,
    },
    (values, positionals, ctx) => {
      const { description, limit, cursor } = values;
      const events = listOf(values.event);
      return subcommand(
        positionals,
        'webhooks: use list, add <url> --event E, rm <id> or deliveries <id>',
        {
          list: noArgs(() => webhooksList(ctx)),
          add: oneArg('the URL', (url) => webhooksAdd(ctx, { url, events, description })),
          rm: oneArg('the webhook id', (id) => webhooksRemove(ctx, id)),
          deliveries: oneArg('the webhook id', (id) =>
            webhooksDeliveries(ctx, { id, limit, cursor }),
          ),
        },
      );
    },
  ),
  backup: fixed(0, '', (_args, ctx) => backup(ctx)),
  campaigns: command(PAGING, (values, positionals, ctx) => {
    if (positionals.length > 1) throw usageError(`unexpected argument ${positionals[1]}`);
    return campaigns(ctx, { id: positionals[0], limit: values.limit, cursor: values.cursor });
  }),
  audit: command(
    {
      ...PAGING,
      action: { type: 'string' },
      actor: { type: 'string' },
      verify: { type: 'boolean' },
    },
    (values, positionals, ctx) => {
      want(positionals, 0, '');
      const { limit, cursor, action, actor } = values;
      return audit(ctx, { limit, cursor, action, actor, verify: !!values.verify });
    },
  ),
  credentials: command({ 'key-stdin': { type: 'boolean' } }, (values, positionals, ctx) => {
    want(positionals, 2, 'the kind (plugin, retriever or service) and the id');
    const [kind, id] = positionals as [string, string];
    return credentialsCommand(ctx.io, { kind, id, keyStdin: !!values['key-stdin'] });
  }),
  eval: local((rest, ctx) => {
    if (rest.length === 0) throw usageError('missing the folder holding phishing/ and ham/');
    return evalCommand(ctx, rest);
  }),
  symbols: local((rest, ctx) => symbolsCommand(ctx, rest)),
  // `learn --forget USER` asks the server (an admin's sign-in); every other form is local
  learn: (rest, io) =>
    rest.some((a) => a === '--forget' || a.startsWith('--forget='))
      ? command({ forget: { type: 'string' } }, (values, positionals, ctx) => {
          want(positionals, 0, '');
          if (!values.forget) throw usageError('--forget needs the user whose labels to forget');
          return learnForgetCommand(ctx, values.forget);
        })(rest, io)
      : local((r, ctx) => learnCommand(ctx, r))(rest, io),
};

/** Commands whose errors are never printed as JSON (they print no JSON). */
const PLAIN = new Set(['credentials', 'eval', 'symbols', 'learn']);

/** Runs one command; answers the exit code. Errors are printed here. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    io.stdout.write(USAGE);
    return command ? EXIT.ok : EXIT.usage;
  }
  const json = !PLAIN.has(command) && rest.includes('--json');
  try {
    const found = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!found) throw usageError(`unknown command ${command}`);
    return await found(rest, io);
  } catch (err) {
    return report(io, err, json);
  }
}

function help(io: CliIo): number {
  io.stdout.write(USAGE);
  return EXIT.ok;
}

function report(io: CliIo, err: unknown, json: boolean): number {
  if (err instanceof CliError) {
    if (json) {
      io.stdout.write(
        `${JSON.stringify({ error: { code: err.code, message: err.message, ...(err.problem ? { problem: err.problem } : {}) } }, null, 2)}\n`,
      );
    }
    io.stderr.write(`trawl: ${err.message}\n`);
    if (err.exitCode === EXIT.usage) io.stderr.write('see: trawl --help\n');
    return err.exitCode;
  }
  io.stderr.write(`trawl: ${errorText(err)}\n`);
  return EXIT.error;
}
