import type {
  AnalysisResult,
  AuditVerification,
  Email,
  Job,
  JobError,
  JobHeadline,
  JobSearchFilters,
  JobStatus,
  StoredJobOrigin,
  Trace,
} from '@trawl/contracts';

/**
 * Repositories over SqlClient. Written once, used with PostgreSQL and PGlite alike.
 * Timestamps are ISO strings at this boundary.
 */
export interface NewJob {
  job_id: string;
  email_id: string;
  workflow_id: string;
  /** The Email; may be left out when `email_json` holds it. */
  email?: Email;
  /**
   * A JSON text of `email`, when the caller already has one (the gateway: the submitted body's own
   * text, ADR 006, or the text a CPU worker made). Stored verbatim; the caller guarantees that
   * `JSON.parse` of it is the Email (spacing, key order and escapes may differ from
   * `JSON.stringify`).
   */
  email_json?: string;
  submitted_by?: string;
  /**
   * Where it came from (`jobs.origin`): the retriever and its message id, and for a reported message
   * the report (`origin.report`, issue 16; indexed as the `reporter` search term when it finishes).
   */
  origin?: StoredJobOrigin;
  /**
   * What the jobs list shows of the message (issue 32); read from `email` when absent. A caller
   * that gives only `email_json` gives it (the gateway computes it where it parsed the message).
   */
  headline?: JobHeadline;
}

export interface JobPage {
  items: Job[];
  next_cursor: string | null;
}

/** What `jobs.claim` answers: the job's stored Email, not validated (see claim). */
export interface ClaimedJob {
  /**
   * The Email as stored: its JSON text (a parsed value where a driver parses the column). The
   * caller parses and validates it; a row from elsewhere may not hold a valid Email.
   */
  email: unknown;
}

/** How a run ended, for `jobs.finish`. */
export type JobOutcome =
  | { status: 'completed'; result: AnalysisResult; trace: Trace }
  | { status: 'failed'; error: JobError; trace?: Trace | undefined };

export interface JobFinish {
  job_id: string;
  outcome: JobOutcome;
  /**
   * Search terms of the job (`kind:value`, searchTermsOf of @trawl/contracts), indexed when, and
   * only when, the job changes; its workflow and submitter are added from the row.
   */
  terms?: string[] | undefined;
  /** Recorded in the sender history (as `senders.record`) when, and only when, the job changes. */
  sender?: { address: string; at: Date; is_phishing: boolean | null } | undefined;
}

/** What `jobs.finish` answers for a job it finished. */
export interface FinishedJob {
  /** The job as stored now: what `get` would answer, built without reading it back. */
  job: Job;
  /** Why the sender could not be recorded; the job is stored all the same. */
  senderError?: unknown;
}

export interface JobRepository {
  /**
   * Stores a new `queued` job. Creates made in the same event-loop turn are written together by
   * one multi-row INSERT (group commit, ADR 005); each call still answers its own job or error
   * (TRAWL_ERR_STORE_CONFLICT for an existing job id, TRAWL_ERR_STORE_UNAVAILABLE when the
   * database is down).
   */
  create(job: NewJob): Promise<Job>;
  /** Removes a job that was never published (compensation when the broker refused it). */
  remove(jobId: string): Promise<void>;
  get(jobId: string): Promise<Job | null>;
  /**
   * Newest first; the cursor is opaque. `filters` (job search, issue 16) combine with AND; a
   * filter on terms only finds finished jobs (they are indexed when a job finishes).
   */
  list(q: {
    status?: JobStatus;
    limit: number;
    cursor?: string;
    filters?: JobSearchFilters;
  }): Promise<JobPage>;
  /**
   * queued|processing → processing with a deadline. Answers false when the job is already completed
   * or failed (a redelivered message for a finished job is not run again) or unknown.
   */
  markProcessing(jobId: string, deadlineAt: Date, configVersion?: string): Promise<boolean>;
  /**
   * markProcessing that also answers the job's stored Email in the same statement (claim check,
   * ADR 005: the analysis request message does not carry the Email). Null when the job is already
   * completed or failed, or unknown. Claims made in the same event-loop turn share one statement
   * (group commit, ADR 007).
   */
  claim(jobId: string, deadlineAt: Date, configVersion?: string): Promise<ClaimedJob | null>;
  /** processing|queued → completed; false when already finished (exactly one stored result). */
  complete(jobId: string, result: AnalysisResult, trace: Trace): Promise<boolean>;
  /** any unfinished → failed; false when already finished. */
  fail(jobId: string, error: JobError, trace?: Trace): Promise<boolean>;
  /**
   * `complete` or `fail` (by `outcome.status`) and, when the job changed, its sender recorded, in
   * one statement that also answers the stored job; null when the job was already finished or is
   * unknown. Finishes made in the same event-loop turn share one statement (group commit, ADR 007).
   */
  finish(f: JobFinish): Promise<FinishedJob | null>;
  /**
   * A job analysed before it was stored (the inline milter, ADR 024), stored as `create` and then
   * `finish` would store it (the finished row, its terms, its sender recorded, its webhook events)
   * by one statement that answers the stored job; null when the job id is stored already (by an
   * attempt whose answer was lost: nothing is changed). `finish.job_id` is `job.job_id`. Records
   * made in the same event-loop turn share one statement (group commit).
   */
  createFinished(job: NewJob, finish: JobFinish): Promise<FinishedJob | null>;
  /** Jobs still processing after their deadline plus `graceMs`. */
  findStuck(now: Date, graceMs: number, limit: number): Promise<string[]>;
  /**
   * Jobs still `queued` more than `maxQueuedMs` after they were stored, oldest first: their request
   * message was most likely never published (the gateway stopped between the row and the broker).
   */
  findUndispatched(now: Date, maxQueuedMs: number, limit: number): Promise<string[]>;
  countByStatus(): Promise<Record<JobStatus, number>>;
}

/** The roles of a user, least first. */
export const ROLES = ['viewer', 'analyst', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface User {
  username: string;
  roles: Role[];
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface UserWithHash extends User {
  password_hash: string;
  /**
   * Moves on (+1) with every change of the user's access: roles, disabled, password. Access tokens
   * carry the version they were issued at; an older one no longer grants access.
   */
  auth_version: number;
}

export interface UserRepository {
  create(u: { username: string; password_hash: string; roles: Role[] }): Promise<User>;
  get(username: string): Promise<UserWithHash | null>;
  list(): Promise<User[]>;
  /** Changes the user's access: also moves `auth_version` on (their access tokens stop working). */
  update(
    username: string,
    patch: { password_hash?: string; roles?: Role[]; disabled?: boolean },
  ): Promise<User | null>;
  /**
   * The `auth_version` an access token must carry to be accepted now; null when the user is gone or
   * disabled. One indexed read (the gateway caches it).
   */
  accessVersion(username: string): Promise<number | null>;
  /**
   * Replaces the hash of an unchanged password (stronger parameters, on login): only while the
   * stored hash is still `oldHash`; `auth_version` stays. True when it replaced it.
   */
  rehash(username: string, oldHash: string, newHash: string): Promise<boolean>;
  remove(username: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface RefreshTokenRepository {
  /** Stores the sha256 of a refresh token. */
  store(t: {
    token_hash: string;
    username: string;
    family_id: string;
    expires_at: Date;
  }): Promise<void>;
  /**
   * Atomically marks the token used and answers its row; null when unknown, expired, used or revoked.
   * A second use of a used token revokes its whole family (theft detection).
   */
  consume(tokenHash: string, now: Date): Promise<{ username: string; family_id: string } | null>;
  revokeUser(username: string): Promise<void>;
}

export interface AuditEntry {
  actor: string | null;
  action: string;
  target: string | null;
  outcome: 'success' | 'failure';
  address: string | null;
  request_id: string | null;
  details?: Record<string, unknown>;
}

export interface AuditRecord extends AuditEntry {
  /** A decimal number, as a string: ids grow with every append. */
  id: string;
  at: string;
  /** The hash of the row before it in the chain (null: a row written before the chain existed). */
  prev_hash: string | null;
  /** sha256 of this row's content and prev_hash (null: written before the chain existed). */
  hash: string | null;
}

/** What `audit.verify` found (the API's shape). */
export type { AuditVerification };

/**
 * The audit log: a hash chain (each row holds the hash of the row before it), appended under one
 * lock so that the chain is a single sequence across replicas; retention purges its oldest rows
 * and moves the chain's anchor.
 */
export interface AuditRepository {
  append(e: AuditEntry): Promise<{ id: string; hash: string }>;
  /** Newest first (by id); the cursor is opaque. */
  list(q: { limit: number; cursor?: string; action?: string; actor?: string }): Promise<{
    items: AuditRecord[];
    next_cursor: string | null;
  }>;
  /** Walks the chain from its anchor to its head and recomputes every hash. */
  verify(): Promise<AuditVerification>;
  /** Removes the rows older than `before` (oldest first, in batches); answers how many. */
  purge(before: Date): Promise<number>;
}

export interface ConfigVersionRepository {
  /** Records a configuration version (idempotent on version). */
  record(v: {
    version: string;
    service_yaml: string;
    workflows_yaml: string;
    actor: string | null;
  }): Promise<void>;
  latest(): Promise<{ version: string; created_at: string } | null>;
}

export interface SenderStats {
  address: string;
  first_seen: string;
  last_seen: string;
  message_count: number;
  phishing_count: number;
}

export interface SenderHistoryRepository {
  /** Records one analysed message of a sender, with its verdict when known. */
  record(address: string, at: Date, isPhishing: boolean | null): Promise<void>;
  /** Stats for an address and for its domain (address `@domain`). */
  get(address: string): Promise<{ sender: SenderStats | null; domain: SenderStats | null }>;
}

export interface Store {
  sql: import('./types.ts').SqlClient;
  jobs: JobRepository;
  users: UserRepository;
  refreshTokens: RefreshTokenRepository;
  audit: AuditRepository;
  configVersions: ConfigVersionRepository;
  senders: SenderHistoryRepository;
  classifier: import('./classifier-repository.ts').ClassifierRepository;
  /** The message view's read of a job (issue 16). */
  messages: import('./message-repository.ts').MessageRepository;
  /** Campaigns: jobs grouped by a shared lure (issue 16). */
  campaigns: import('./campaign-repository.ts').CampaignRepository;
  /** Feedback on verdicts (issue 17). */
  feedback: import('./feedback-repository.ts').FeedbackRepository;
  /** Webhook endpoints and their durable deliveries (issue 17). */
  webhooks: import('./webhook-repository.ts').WebhookRepository;
  /** Originals of quarantined messages, released once (issue 32). */
  quarantine: import('./quarantine-repository.ts').QuarantineRepository;
  /** The allow and block lists (issue 32). */
  lists: import('./list-repository.ts').ListRepository;
}

/** A migrated database as the embedded mode and tests hold it: its client and the store on it. */
export interface StoreOnSql {
  sql: import('./types.ts').SqlClient;
  store: Store;
}
