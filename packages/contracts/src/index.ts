export {
  /** The keys the fast paths below read and copy (or leave to zod when present), per object. */
  ANALYSIS_FAST_KEYS,
  ANALYZER_STATUSES,
  /** The lengths of an analysis answer, defined once for the schemas and their fast paths. */
  ANSWER_LIMITS,
  AnalysisContext,
  AnalysisResult,
  /** What a plugin answers on POST /internal/analyze. */
  AnalyzerAnswer,
  type AnalyzerAnswerInput,
  /** One analyzer's result inside analysis_context (spec 2.4). */
  AnalyzerResult,
  AnalyzerStatus,
  /** Indicator types about one of the message's attachments. */
  ATTACHMENT_INDICATOR_TYPES,
  /** True when the fast path of safeParseAnalyzerAnswer handles every key of its schemas. */
  analyzerAnswerFastPathCovers,
  /** POST /internal/enrich answer. */
  EnrichmentResult,
  /** POST /internal/enrich request. */
  EnrichRequest,
  Indicator,
  /** Indicator types raised by the built-in analyzers. */
  KNOWN_INDICATOR_TYPES,
  /** A duration, or a time since a start, in milliseconds. */
  Millis,
  Probability,
  RECOMMENDED_ACTIONS,
  RecommendedAction,
  /** The aggregate of one stage, available to conditions as `stages.<name>.result`. */
  StageAggregate,
  /** analysis_context (spec 2.8). */
  StageContext,
  /** Exactly `AnalyzerAnswer.safeParse(value)` (same accepted and refused inputs, same… */
  safeParseAnalyzerAnswer,
  /** Exactly `StageContext.safeParse(value)` (same accepted and refused inputs, same… */
  safeParseStageContext,
  /** True when the fast path of safeParseStageContext handles every key of its schemas. */
  stageContextFastPathCovers,
  THREAT_LEVELS,
  ThreatLevel,
  /** Indicator types about one of the message's links. */
  URL_INDICATOR_TYPES,
} from './analysis.ts';
export {
  /** GET /api/v1/audit/verify answer. */
  AuditVerification,
} from './audit.ts';
export {
  /** How long to wait before trying again after consecutive failures. */
  type BackoffPolicy,
  /** A source's failure count and the time before which it is not tried again. */
  BackoffState,
  /** The delay before the next attempt after `failures` consecutive failures (1 for the first). */
  backoffDelay,
  /** The policy of a workflow analyzer's `retry_config` (equal jitter, as the engine has… */
  retryBackoff,
} from './backoff.ts';
export {
  /** Event on trawl.results. */
  AnalysisEvent,
  /** Message on trawl.analysis / analysis.requested. */
  AnalysisRequestMessage,
  /** Event on trawl.control / config.reloaded. */
  ConfigReloadedEvent,
  /** A message the gateway refused for what it is (unparseable, too large, invalid). */
  MailUnanalyzedEvent,
  /** Broker topology. */
  ROUTING_KEYS,
  type Topology,
  topology,
} from './broker.ts';
export {
  /** One campaign as listed (GET /api/v1/campaigns). */
  Campaign,
  /** GET /api/v1/campaigns/{id}. */
  CampaignDetail,
  CampaignList,
  CampaignListQuery,
  /** A member of a campaign, with its recipients and verdict. */
  CampaignMember,
  /** Campaigns and the message view (issue 16). */
  LURE_KINDS,
  LureKind,
  /** GET /api/v1/analyze/{job_id}/message. */
  MessageView,
} from './campaign.ts';
export {
  /** Whether a UTF-16 code unit is JavaScript white space (`\s`, what `trim()` removes). */
  isSpaceCode,
} from './char-codes.ts';
export {
  /** A holder of the platform key answering calls meant for one party (a plugin server… */
  credentialDeriver,
  /** The credential of `party`, derived from the platform key. */
  deriveCredential,
  /** Whether a presented string has the shape of a derived credential (it says nothing of… */
  looksLikeCredential,
  Party,
  /** Per-party credentials (docs/security.md, "Credentials"). */
  PartyKind,
  /** Platform services with a credential of their own (`service:<name>`). */
  PLATFORM_SERVICES,
  type PlatformServiceName,
  /** `plugin:headers`, `retriever:imap`, `service:mail-orchestrator`. */
  partyLabel,
  /** The party a presented credential belongs to, when it was derived from `platformKey`. */
  verifyCredential,
} from './credentials.ts';
export {
  /** Levenshtein distance between two short names (ids, stage names), for "did you mean"… */
  editDistance,
} from './edit-distance.ts';
export {
  /** Free-form per-stage context (spec 2.8). */
  AnalysisContextInput,
  Attachment,
  /** Base64 text. */
  BASE64_RE,
  /** Decoded length of a base64 string without decoding it. */
  base64DecodedLength,
  createAttachmentSchema,
  createEmailHeadersSchema,
  createEmailSchema,
  DEFAULT_EMAIL_LIMITS,
  /** The fixed lengths of an Email's fields, defined once for the schema, its fast path… */
  EMAIL_FIELD_LIMITS,
  Email,
  EmailAddress,
  type EmailHeaders,
  type EmailInput,
  /** Limits applied to an Email. */
  type EmailLimits,
  /** An ISO 8601 timestamp, with a zone (`Z` or an offset) or local. */
  IsoTimestamp,
  LanguageCode,
} from './email.ts';
export {
  /** The keys the fast path reads and copies (or leaves to zod), per object of the Email. */
  EMAIL_FAST_KEYS,
  /** The Email schema of some limits with a cheap `safeParse`. */
  type EmailParser,
  /** True when the fast path handles every key of the Email schema `schema` (and no other). */
  emailFastPathCovers,
  /** The Email parser for `limits`, built once per limits object. */
  emailParser,
  /** Exactly `Email.safeParse(value)`, cheap for the common case (see `emailParser`). */
  safeParseEmail,
} from './email-fast.ts';
export {
  BadInputError,
  /** Codes shared across packages. */
  ERROR_CODES,
  /** The one way to put a thrown value into a log line, a trace or a message (issue 30). */
  errorText,
  /** Whether an error says that the analyzer or provider called is not configured. */
  isNotConfigured,
  /** What a skipped analyzer's trace says when it is off. */
  NOT_CONFIGURED,
  /** Codes of reading a peer's answer (`readBounded`, `fetchBounded` of peer-answer.ts,… */
  PEER_ERROR_CODES,
  /** RFC 9457 problem details, as every error answer carries them. */
  ProblemDetails,
  TransientError,
  /** Base of every error Trawl raises on purpose. */
  TrawlError,
} from './errors.ts';
export {
  /** A method's outcome in the evidence. */
  AUTH_OUTCOMES,
  /** The results an Authentication-Results header may give a method (RFC 8601), as stored. */
  AUTH_RESULT_VALUES,
  AuthOutcomeValue,
  /** What kind of attachment a link was found in, by the attachment decoders (issue 32). */
  DOCUMENT_SOURCES,
  /** A link found inside an attachment, as the attachments analyzer reports it in its… */
  DocumentLink,
  DocumentSource,
  /** The links found inside attachments that the analyzers of `context` (an analysis_context). */
  documentLinksIn,
  EVIDENCE_KINDS,
  /** The evidence behind a verdict (issue 16). */
  EVIDENCE_LIMITS,
  Evidence,
  EvidenceAddress,
  EvidenceAttachment,
  /** SPF / DKIM / DMARC / ARC as read from Authentication-Results (RFC 8601) of the trusted hop. */
  EvidenceAuth,
  /** An entry of the organisation's allow or block list that matched the message (issue 32). */
  EvidenceListMatch,
  EvidenceMessage,
  EvidenceReceived,
  /** What an indicator is about. */
  EvidenceRef,
  /** How the verdict's score was made, when a scorer made it. */
  EvidenceScore,
  EvidenceUrl,
  /** A group's tally. */
  GroupTally,
  /** One Received header, topmost (the receiver's own) first. */
  ReceivedHop,
  /** One symbol's share of the score. */
  ScoreContribution,
  URL_PLACES,
} from './evidence.ts';
export {
  /** ISO 639-1 two-letter language codes. */
  ISO_639_1,
} from './iso639.ts';
export {
  CallTrace,
  /** Recipients a job row and a list item name (the rest are counted). */
  HEADLINE_RECIPIENTS,
  /** The headline of a message. */
  headlineOf,
  /** The ids of a job and of the message it analyses, as every shape about a job carries them. */
  JOB_IDS,
  JOB_STATUSES,
  Job,
  /** What a job shows of its campaign (GET /api/v1/analyze/{job_id}). */
  JobCampaign,
  JobError,
  /** What the jobs list shows of a message (issue 32), stored on the job row when the job is… */
  JobHeadline,
  JobList,
  JobStatus,
  /** The query of a paged list. */
  PAGE_QUERY,
  /** A page of a list, newest first. */
  pageOf,
  STAGE_STATUSES,
  StageStatus,
  StageTrace,
  /** POST /api/v1/analyze body. */
  SubmitRequest,
  /** POST /api/v1/analyze answer. */
  SubmitResponse,
  /** `Name <a@b>` of the first From header → `Name` (quotes removed), or undefined. */
  senderDisplayName,
  Trace,
} from './job.ts';
export {
  /** The filters of a search as the store takes them (the query without limit and cursor). */
  type JobSearchFilters,
  /** GET /api/v1/analyze query. */
  JobSearchQuery,
  /** A domain as indexed (lower-case, IDN as punycode). */
  normaliseDomain,
  /** The kinds a search reads from the job row instead of `job_terms` (issue 29). */
  ROW_TERM_KINDS,
  /** Subject words indexed per job. */
  SUBJECT_MAX_WORDS,
  /** The store's filters of a parsed query. */
  searchFiltersOf,
  /** The search terms of a finished job. */
  searchTermsOf,
  /** The words of a subject as indexed and as searched. */
  subjectWords,
  /** Job search (issue 16). */
  TERM_KINDS,
  /** Longest value indexed (longer ones are cut). */
  TERM_MAX_CHARS,
  type TermKind,
  /** A search term. */
  term,
} from './job-search.ts';
export {
  /** A string holding JSON that `schema` reads (a setting given as JSON text). */
  jsonText,
} from './json-text.ts';
export {
  /** POST /api/v1/lists body. */
  CreateListEntry,
  /** What an entry matches. */
  LIST_KINDS,
  /** The organisation's allow and block lists (issue 32). */
  LIST_NAMES,
  ListEntries,
  /** An entry as the API shows it. */
  ListEntry,
  ListKind,
  ListName,
  /** GET /api/v1/lists query. */
  ListQuery,
  /** Event on trawl.control / lists.changed. */
  ListsChangedEvent,
  /** Entries a list holds at most (the analyzers keep them all in memory). */
  MAX_LIST_ENTRIES,
  /** An entry's value as stored and matched. */
  normaliseListValue,
} from './lists.ts';
export {
  type BoundedBody,
  type BoundedReadOptions,
  /** What may be said of an answer in a log, an error or a delivery log. */
  describeAnswer,
  type FetchBoundedOptions,
  /** One HTTP exchange with a bounded answer. */
  fetchBounded,
  type PeerAnswer,
  /** Reading a peer's answer within a size and a time budget (issue 28). */
  PeerAnswerError,
  /** A body. */
  type PeerBody,
  /** Reads at most `maxBytes` of `body`. */
  readBounded,
} from './peer-answer.ts';
export {
  /** Escapes one reference token of a JSON pointer. */
  escapePointerToken,
  type ParseOutcome,
  /** Parses `data` with `schema`, answering either the value or every problem found. */
  parseWith,
  /** Builds a JSON pointer from path segments (`['a', 0, 'b']` → `/a/0/b`). */
  toJsonPointer,
  /** Turns a zod error into problems, each with a JSON pointer prefixed by `prefix`. */
  toProblems,
  /** One validation problem. */
  type ValidationProblem,
} from './problems.ts';
export {
  /** Largest original recorded (base64 of the filter's largest message, 25 MiB by default). */
  QUARANTINE_MAX_RAW_BYTES,
  /** Quarantine release (issue 32). */
  QUARANTINE_STATES,
  /** A quarantined message as the API shows it (never its content). */
  QuarantineRecord,
  /** What the filter records (its name comes from its credential). */
  QuarantineSubmit,
  /** What the gateway asks the filter to deliver (POST /internal/release). */
  ReleaseRequest,
} from './quarantine.ts';
export {
  JobReport,
  /** Reported-mail triage (issue 16). */
  REPORT_FOUND,
  ReportFound,
  /** `jobs.origin`. */
  StoredJobOrigin,
} from './report.ts';
export {
  AckRequest,
  /** An address of the SMTP envelope as a retriever knows it (the mailbox a message was… */
  EnvelopeAddress,
  FetchRequest,
  FetchResponse,
  /** POST /internal/ingest on the mail orchestrator. */
  IngestRequest,
  /** TRAWL_MAIL_RETRIEVERS. */
  MailRetrievers,
  RetrievedMessage,
  RetrieverEntry,
  /** What kind of verdict a retriever is given. */
  VERDICT_KINDS,
  VerdictKind,
  VerdictRequest,
} from './retrievers.ts';
export {
  /** GET /api/v1/config/analyzers/{id} answer. */
  AnalyzerConfigView,
  /** Form A entry. */
  AnalyzerSettingsEntry,
  /** GET /api/v1/config answer. */
  ConfigView,
  LOG_LEVELS,
  /** Form B entry. */
  PluginEntry,
  /** Whether service.yaml switches a plugin off. */
  pluginDisabled,
  /** POST /api/v1/config/reload answer. */
  ReloadResponse,
  ServiceConfigFile,
  type ServiceConfigFileInput,
  VerdictThresholds,
} from './service-config.ts';
export {
  /** POST /api/v1/webhooks body. */
  CreateWebhook,
  /** POST /api/v1/analyze/{job_id}/feedback answer. */
  FeedbackAnswer,
  /** POST /api/v1/analyze/{job_id}/feedback body. */
  FeedbackRequest,
  /** Feedback on verdicts and webhooks (issue 17). */
  FeedbackVerdictValue,
  /** A job's analyst feedback, as the job shows it. */
  JobFeedback,
  /** PATCH /api/v1/webhooks/{id} body. */
  UpdateWebhook,
  /** The events a webhook can subscribe to. */
  WEBHOOK_EVENT_TYPES,
  /** A registered endpoint as the API shows it (the secret only once, when created). */
  Webhook,
  WebhookEventType,
  /** A webhook URL. */
  WebhookUrl,
} from './webhooks.ts';
export {
  AGGREGATION_METHODS,
  AggregationMethod,
  AnalyzerRef,
  FAILURE_STRATEGIES,
  FailureStrategy,
  ProviderRef,
  RETRY_DEFAULTS,
  RetryConfig,
  STAGE_TYPES,
  Stage,
  type StageInput,
  StageType,
  /** The transitive dependencies of `stage`, given each stage's direct dependencies. */
  upstreamStages,
  WORKFLOW_TIMEOUT_DEFAULT_MS,
  Workflow,
  type WorkflowInput,
  WorkflowsFile,
} from './workflow.ts';
