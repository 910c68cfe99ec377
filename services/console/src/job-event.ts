/**
 * What the console's event stream (GET /api/v1/events) carries: a job was created or ended. The
 * gateway writes it (services/api-gateway/src/console/job-events.ts), the console reads it.
 */
export interface JobEvent {
  type: 'job.created' | 'job.completed' | 'job.failed';
  job_id: string;
  email_id: string;
  workflow: string;
  at: string;
  /** The verdict, without evidence or indicators (the job holds them). */
  result?: {
    is_phishing: boolean;
    threat_level: string;
    confidence: number;
    recommended_action: string;
  };
  error?: { code: string; message: string };
}
