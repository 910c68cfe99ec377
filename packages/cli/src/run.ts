import { type ParseArgsConfig, parseArgs } from 'node:util';
import { analyze, analyzeMany } from './commands/analyze.ts';
import { audit } from './commands/audit.ts';
import { backup } from './commands/backup.ts';
import { campaigns } from './commands/campaigns.ts';
import { configReload, configShow } from './commands/config.ts';
import { credentialsCommand } from './commands/credentials.ts';
import { evalCommand, symbolsCommand } from './commands/eval.ts';
import { feedbackCommand } from './commands/feedback.ts';
import { JOB_FILTER_FLAGS, job, jobs } from './commands/jobs.ts';
import { learnCommand } from './commands/learn.ts';
import { login } from './commands/login.ts';
import { usersAdd, usersList, usersSetDisabled } from './commands/users.ts';
import {
  webhooksAdd,
  webhooksDeliveries,
  webhooksList,
  webhooksRemove,
} from './commands/webhooks.ts';
import { workflowsDryRun, workflowsList, workflowsValidate } from './commands/workflows.ts';
import { makeCtx } from './context.ts';
import { CliError, usageError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import type { CliIo } from './io.ts';

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
  workflows list                               the configured workflows
  workflows validate <file.yaml>               check workflows against the server
  workflows dry-run <id> <file.eml>            run a workflow now, store nothing
  config show | reload                         configuration version / reload the files (admin)
  users add <name> --role R [--role R] [--password-stdin] | list      (admin)
  users disable <name> | enable <name>         stop / allow an account's logins and tokens (admin)
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

/** Runs one command; answers the exit code. Errors are printed here. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    io.stdout.write(USAGE);
    return command ? EXIT.ok : EXIT.usage;
  }
  let json = rest.includes('--json');
  try {
    switch (command) {
      case 'login': {
        const { values, positionals } = parse(rest, {
          user: { type: 'string' },
          'password-stdin': { type: 'boolean' },
        });
        if (values.help) return help(io);
        want(positionals, 0, '');
        const ctx = ctxOf(io, values);
        return await login(ctx, { user: values.user, passwordStdin: !!values['password-stdin'] });
      }
      case 'analyze': {
        const { values, positionals } = parse(rest, {
          workflow: { type: 'string' },
          wait: { type: 'boolean' },
          timeout: { type: 'string' },
          report: { type: 'boolean' },
        });
        if (values.help) return help(io);
        if (positionals.length === 0)
          throw usageError('missing the message file(s) (or - for standard input)');
        const timeoutSeconds = Number(values.timeout ?? 300);
        if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
          throw usageError('--timeout must be a positive number of seconds');
        const ctx = ctxOf(io, values);
        if (positionals.length > 1) {
          const wait = !!values.wait;
          return await analyzeMany(ctx, {
            files: positionals,
            workflow: values.workflow,
            wait,
            timeoutSeconds,
            report: !!values.report,
          });
        }
        return await analyze(ctx, {
          file: positionals[0] as string,
          workflow: values.workflow,
          wait: !!values.wait,
          timeoutSeconds,
          report: !!values.report,
        });
      }
      case 'jobs': {
        const { values, positionals } = parse(rest, {
          status: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
          phishing: { type: 'boolean' },
          clean: { type: 'boolean' },
          ...Object.fromEntries(JOB_FILTER_FLAGS.map((f) => [f, { type: 'string' as const }])),
        });
        if (values.help) return help(io);
        want(positionals, 0, '');
        const ctx = ctxOf(io, values);
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
      }
      case 'job': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(io);
        want(positionals, 1, 'the job id');
        return await job(ctxOf(io, values), positionals[0] as string);
      }
      case 'workflows': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(io);
        const ctx = ctxOf(io, values);
        return await subcommand(
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
        );
      }
      case 'config': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(io);
        const ctx = ctxOf(io, values);
        want(positionals, 1, 'show or reload');
        if (positionals[0] === 'show') return await configShow(ctx);
        if (positionals[0] === 'reload') return await configReload(ctx);
        throw usageError('config: use show or reload');
      }
      case 'users': {
        const { values, positionals } = parse(rest, {
          role: { type: 'string', multiple: true },
          'password-stdin': { type: 'boolean' },
        });
        if (values.help) return help(io);
        const ctx = ctxOf(io, values);
        const setDisabled = (disabled: boolean) =>
          oneArg('the user name', (name) => usersSetDisabled(ctx, name, disabled));
        return await subcommand(
          positionals,
          'users: use add <name> --role R, list, disable <name> or enable <name>',
          {
            list: noArgs(() => usersList(ctx)),
            add: oneArg('the user name', (name) =>
              usersAdd(ctx, {
                name,
                roles: listOf(values.role),
                passwordStdin: !!values['password-stdin'],
              }),
            ),
            disable: setDisabled(true),
            enable: setDisabled(false),
          },
        );
      }
      case 'feedback': {
        const { values, positionals } = parse(rest, { note: { type: 'string' } });
        if (values.help) return help(io);
        want(positionals, 2, 'the job id and the verdict (phishing or legitimate)');
        return await feedbackCommand(ctxOf(io, values), {
          jobId: positionals[0] as string,
          verdict: positionals[1] as string,
          note: values.note,
        });
      }
      case 'webhooks': {
        const { values, positionals } = parse(rest, {
          event: { type: 'string', multiple: true },
          description: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
        });
        if (values.help) return help(io);
        const ctx = ctxOf(io, values);
        return await subcommand(
          positionals,
          'webhooks: use list, add <url> --event E, rm <id> or deliveries <id>',
          {
            list: noArgs(() => webhooksList(ctx)),
            add: oneArg('the URL', (url) =>
              webhooksAdd(ctx, {
                url,
                events: listOf(values.event),
                description: values.description,
              }),
            ),
            rm: oneArg('the webhook id', (id) => webhooksRemove(ctx, id)),
            deliveries: oneArg('the webhook id', (id) =>
              webhooksDeliveries(ctx, { id, limit: values.limit, cursor: values.cursor }),
            ),
          },
        );
      }
      case 'backup': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(io);
        want(positionals, 0, '');
        return await backup(ctxOf(io, values));
      }
      case 'campaigns': {
        const { values, positionals } = parse(rest, {
          limit: { type: 'string' },
          cursor: { type: 'string' },
        });
        if (values.help) return help(io);
        if (positionals.length > 1) throw usageError(`unexpected argument ${positionals[1]}`);
        return await campaigns(ctxOf(io, values), {
          id: positionals[0],
          limit: values.limit,
          cursor: values.cursor,
        });
      }
      case 'audit': {
        const { values, positionals } = parse(rest, {
          limit: { type: 'string' },
          cursor: { type: 'string' },
          action: { type: 'string' },
          actor: { type: 'string' },
          verify: { type: 'boolean' },
        });
        if (values.help) return help(io);
        want(positionals, 0, '');
        return await audit(ctxOf(io, values), {
          limit: values.limit,
          cursor: values.cursor,
          action: values.action,
          actor: values.actor,
          verify: !!values.verify,
        });
      }
      case 'credentials': {
        json = false;
        const { values, positionals } = parse(rest, { 'key-stdin': { type: 'boolean' } });
        if (values.help) return help(io);
        want(positionals, 2, 'the kind (plugin, retriever or service) and the id');
        return await credentialsCommand(io, {
          kind: positionals[0] as string,
          id: positionals[1] as string,
          keyStdin: !!values['key-stdin'],
        });
      }
      case 'eval': {
        json = false;
        if (rest.length === 0 || rest[0] === '--help' || rest[0] === '-h') {
          if (rest.length === 0) throw usageError('missing the folder holding phishing/ and ham/');
        }
        return await evalCommand(makeCtx(io, { json: false, url: undefined }), rest);
      }
      case 'symbols': {
        json = false;
        return await symbolsCommand(makeCtx(io, { json: false, url: undefined }), rest);
      }
      case 'learn': {
        json = false;
        return await learnCommand(makeCtx(io, { json: false, url: undefined }), rest);
      }
      default:
        throw usageError(`unknown command ${command}`);
    }
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
  io.stderr.write(`trawl: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.error;
}
