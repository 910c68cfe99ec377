import { z } from 'zod';
import { AnalysisResult, AnalyzerStatus, StageAggregate } from './analysis.ts';
import { Email } from './email.ts';

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

export const JobError = z.object({
  code: z.string(),
  message: z.string(),
  stage: z.string().optional(),
  analyzer: z.string().optional(),
});
export type JobError = z.infer<typeof JobError>;

export const CallTrace = z.object({
  id: z.string(),
  status: AnalyzerStatus,
  attempts: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
  error: z.string().optional(),
  cached: z.boolean().optional(),
});
export type CallTrace = z.infer<typeof CallTrace>;

export const STAGE_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped'] as const;
export const StageStatus = z.enum(STAGE_STATUSES);
export type StageStatus = z.infer<typeof StageStatus>;

export const StageTrace = z.object({
  name: z.string(),
  status: StageStatus,
  started_at_ms: z.number().nonnegative().optional(),
  duration_ms: z.number().nonnegative(),
  error: z.string().optional(),
  condition: z.string().optional(),
  providers: z.array(CallTrace),
  analyzers: z.array(CallTrace),
  result: StageAggregate.optional(),
});
export type StageTrace = z.infer<typeof StageTrace>;

export const Trace = z.object({
  workflow_id: z.string(),
  config_version: z.string().optional(),
  duration_ms: z.number().nonnegative(),
  final_stage: z.string().optional(),
  stages: z.array(StageTrace),
});
export type Trace = z.infer<typeof Trace>;

export const Job = z.object({
  job_id: z.uuid(),
  email_id: z.string(),
  status: JobStatus,
  workflow: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable().optional(),
  completed_at: z.string().nullable().optional(),
  result: AnalysisResult.optional(),
  error: JobError.optional(),
  trace: Trace.optional(),
});
export type Job = z.infer<typeof Job>;

/** POST /api/v1/analyze body. */
export const SubmitRequest = z.object({
  email: Email,
  workflow_id: z.string().min(1).max(128).optional(),
});
export type SubmitRequest = z.output<typeof SubmitRequest>;

/** POST /api/v1/analyze answer. */
export const SubmitResponse = z.object({
  job_id: z.uuid(),
  email_id: z.string(),
  status: z.literal('queued'),
  workflow: z.string(),
  message: z.string(),
});
export type SubmitResponse = z.infer<typeof SubmitResponse>;

export const JobList = z.object({
  items: z.array(Job),
  next_cursor: z.string().nullable(),
});
export type JobList = z.infer<typeof JobList>;
