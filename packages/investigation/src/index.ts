export {
  /** Groups finished jobs into campaigns in batches, in the background (the orchestrator's queue). */
  type CampaignGrouper,
  /** Builds the campaign grouper over a campaigns store. */
  createCampaignGrouper,
  /** Whether a result is suspicious enough for its job to join a campaign. */
  isSuspicious,
  /** What a job's lure is made of: the keys a campaign is matched on. */
  type Lure,
  /** The lure of a job, from its Email and evidence. */
  lureOf,
  /** The MinHash signature of a message's text, or undefined when it is too short. */
  textSignature,
} from './campaigns.ts';
export {
  /** Adds the evidence of a finished job to its result (never throws: the error is returned). */
  attachEvidence,
  /** The evidence of a job, built from its Email. */
  buildEvidence,
  /** The score breakdown of a run, from the analysis context. */
  scoreOf,
  /** A result carrying the given evidence. */
  withEvidence,
} from './evidence.ts';
export {
  /** Bounds of what feedback teaches: one user's most share of the training (issue 28). */
  type FeedbackBounds,
  /** What learning a job's analyst feedback did. */
  type FeedbackLearning,
  /** `trawl learn --forget USER`: unlearns a user's labels, deciding each job again. */
  forgetTeacher,
  /** Trains the classifier from a job's analyst feedback, in one transaction. */
  learnFeedback,
  /** Learns every analyst feedback not yet learnt (the gateway's catch-up). */
  learnPendingFeedback,
} from './feedback-learning.ts';
export {
  /** Sends the reporter the verdict on the message they reported. */
  createReportNotifier,
  /** Reads and checks a notification template file. */
  loadTemplate,
  /** The SMTP transport of the notifier, its reads and timeouts bounded. */
  notifyTransport,
  /** The reporter notifier a process runs. */
  type ReportNotifier,
  /** The notifier of the configuration, or undefined when no SMTP relay is configured. */
  reportNotifierFromConfig,
} from './report-notifier.ts';
export {
  /** Builds the retention purge over a retention repository. */
  createRetention,
  /** The retention purge (message bodies, then jobs, past their age). */
  type Retention,
  /** The retention of a service's own PostgreSQL store. */
  retentionOfStore,
} from './retention.ts';
