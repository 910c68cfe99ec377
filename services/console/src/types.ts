/** The shapes the console reads (the API's own, as documented in docs/api.md; only what it uses). */
export interface Indicator {
  type: string;
  value: string;
  confidence: number;
  evidence?: { kind: string; index?: number; name?: string };
}
/** How a scorer made the verdict: each symbol's log-odds and what each group counted (capped). */
interface EvidenceScore {
  by: string;
  probability: number;
  log_odds: number;
  bias: number;
  contributions: { symbol: string; weight: number; group?: string }[];
  groups: Record<string, { sum: number; counted: number }>;
}

export interface Evidence {
  score?: EvidenceScore;
  /** Allow and block list entries that matched (issue 32). */
  lists?: {
    list: 'allow' | 'block';
    kind: string;
    value: string;
    entry_id: string;
    note: string | null;
    matched: string;
    counted: boolean;
    reason?: string;
  }[];
  message: {
    subject: string;
    from: { address: string; display_name?: string };
    reply_to: string[];
    return_path?: string;
    to: string[];
    cc: string[];
    bcc: string[];
    date: string;
    message_id?: string;
  };
  received: {
    sending_ip?: string;
    hops: { from?: string; by?: string; ip?: string; date?: string }[];
  };
  auth: {
    spf: string;
    dkim: string;
    dmarc: string;
    arc: string;
    dmarc_from?: string;
    dkim_pass_domains: string[];
    authserv_id: string;
    verified: boolean;
  };
  urls: {
    url: string;
    decoded: string;
    host: string;
    registrable_domain?: string;
    text?: string;
    found_in: string;
    element: string;
    /** A link inside an attachment: which decoder found it (pdf, office, calendar, qr). */
    source?: string;
    attachment_name?: string;
    hidden?: boolean;
  }[];
  attachments: {
    filename: string;
    declared_type: string;
    sniffed_type?: string;
    size?: number;
    sha256?: string;
    type_mismatch?: boolean;
    findings?: string[];
  }[];
}
export interface Result {
  is_phishing: boolean;
  threat_level: string;
  confidence: number;
  summary: string;
  recommended_action: string;
  indicators: Indicator[];
  evidence?: Evidence;
}
interface CallTrace {
  id: string;
  status: string;
  attempts: number;
  duration_ms: number;
  error?: string;
  cached?: boolean;
}
interface StageTrace {
  name: string;
  status: string;
  started_at_ms?: number;
  duration_ms: number;
  error?: string;
  condition?: string;
  /** Why it was skipped when no condition said so (`not configured`). */
  reason?: string;
  providers: CallTrace[];
  analyzers: CallTrace[];
  result?: Result & { probability: number };
}
export interface Trace {
  workflow_id: string;
  config_version?: string;
  duration_ms: number;
  final_stage?: string;
  stages: StageTrace[];
}
export interface Job {
  job_id: string;
  email_id: string;
  status: 'queued' | 'processing' | 'completed' | 'failed';
  workflow: string;
  created_at: string;
  started_at?: string | null;
  completed_at?: string | null;
  result?: Result;
  error?: { code: string; message: string; stage?: string; analyzer?: string };
  trace?: Trace;
  feedback?: {
    verdict: 'phishing' | 'legitimate';
    note?: string | null;
    by: string;
    at: string;
  } | null;
  /** Counts: messages, distinct recipients and reporters of the campaign (absent: none). */
  campaign?: { id: string; size: number; recipients: number; reporters: number };
  // What the list shows (absent on jobs stored before the list carried them)
  subject?: string;
  sender?: string;
  sender_name?: string;
  /** The first recipients; `recipient_count` counts them all. */
  recipients?: string[];
  recipient_count?: number;
  reporter?: string;
  top_indicator?: Indicator;
}
export interface JobList {
  items: Job[];
  next_cursor: string | null;
}
