import {
  AnalysisResult,
  AnalyzerConfigView,
  CampaignDetail,
  CampaignList,
  ConfigView,
  CreateListEntry,
  CreateWebhook,
  Email,
  FeedbackAnswer,
  FeedbackRequest,
  Job,
  JobList,
  ListEntries,
  ListEntry,
  MessageView,
  ProblemDetails,
  QuarantineRecord,
  QuarantineSubmit,
  ReloadResponse,
  SubmitRequest,
  SubmitResponse,
  Trace,
  UpdateWebhook,
  Webhook,
  Workflow,
} from '@trawl/contracts';
import { z } from 'zod';

function schema(s: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  /** Absent when the request said `X-Trawl-Refresh: cookie`: it is in the cookie only. */
  refresh_token: z.string().optional(),
});
const TokenRequest = z.object({
  grant_type: z.enum(['password', 'refresh_token']),
  username: z.string().optional(),
  password: z.string().optional(),
  refresh_token: z.string().optional(),
});
const Health = z.object({
  status: z.string(),
  service: z.string(),
  version: z.string(),
  features: z.object({
    configuration_api: z.boolean(),
    database_config: z.boolean(),
    oauth: z.boolean(),
    rate_limiting: z.boolean(),
    audit_logging: z.boolean(),
  }),
});
const ValidateAnswer = z.object({
  valid: z.boolean(),
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
});
const DryRunAnswer = z.object({
  workflow: z.string(),
  status: z.enum(['completed', 'failed']),
  result: AnalysisResult.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  trace: Trace,
});
const UserView = z.object({
  username: z.string(),
  roles: z.array(z.enum(['viewer', 'analyst', 'admin'])),
  disabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

const FeedbackTeachers = z.object({
  /** Every document the classifier learnt (corpus training and feedback). */
  documents: z.number().int(),
  max_share_percent: z.number().int(),
  teachers: z.array(
    z.object({
      user: z.string(),
      labels: z.number().int(),
      learned: z.object({ phishing: z.number().int(), legitimate: z.number().int() }),
      held: z.object({ outvoted: z.number().int(), capped: z.number().int() }),
      forgotten: z.number().int(),
      last_at: z.string().nullable(),
      share: z.number(),
    }),
  ),
});
const ForgetAnswer = z.object({
  user: z.string(),
  /** Jobs decided again (those with a label of the user, or learnt from them). */
  jobs: z.number().int(),
  /** Jobs whose learnt label changed. */
  changed: z.number().int(),
});
const ChangePassword = z.object({
  current_password: z.string(),
  new_password: z.string().describe('follows the password rule (docs/security.md)'),
});
const PasswordChanged = z.object({ changed: z.literal(true), message: z.string() });

/** `components.schemas`: the same zod schemas the routes validate with, as JSON Schema. */
export function componentSchemas(): Record<string, unknown> {
  return {
    Email: schema(Email),
    ForgetAnswer: schema(ForgetAnswer),
    FeedbackTeachers: schema(FeedbackTeachers),
    SubmitRequest: schema(SubmitRequest),
    SubmitResponse: schema(SubmitResponse),
    Job: schema(Job),
    JobList: schema(JobList),
    AnalysisResult: schema(AnalysisResult),
    ConfigView: schema(ConfigView),
    AnalyzerConfigView: schema(AnalyzerConfigView),
    ReloadResponse: schema(ReloadResponse),
    Workflow: schema(Workflow),
    ValidateAnswer: schema(ValidateAnswer),
    DryRunAnswer: schema(DryRunAnswer),
    ProblemDetails: schema(ProblemDetails),
    TokenRequest: schema(TokenRequest),
    TokenResponse: schema(TokenResponse),
    Health: schema(Health),
    User: schema(UserView),
    MessageView: schema(MessageView),
    CampaignList: schema(CampaignList),
    CampaignDetail: schema(CampaignDetail),
    FeedbackRequest: schema(FeedbackRequest),
    FeedbackAnswer: schema(FeedbackAnswer),
    QuarantineRecord: schema(QuarantineRecord),
    QuarantineSubmit: schema(QuarantineSubmit),
    CreateWebhook: schema(CreateWebhook),
    UpdateWebhook: schema(UpdateWebhook),
    Webhook: schema(Webhook),
    NewWebhook: schema(Webhook.extend({ secret: z.string() })),
    CreateListEntry: schema(CreateListEntry),
    ChangePassword: schema(ChangePassword),
    PasswordChanged: schema(PasswordChanged),
    ListEntry: schema(ListEntry),
    ListEntries: schema(ListEntries),
  };
}
