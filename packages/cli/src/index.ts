export { ApiClient, type ApiClientOptions, type RequestOptions } from './api-client.ts';
export { exitCodeOf } from './commands/analyze.ts';
export { credentialsPath, readCredentials, type Session } from './credentials.ts';
export { CLI_ERRORS, CliError } from './errors.ts';
export { EXIT, type ExitCode } from './exit-codes.ts';
export type { CliIo, Out } from './io.ts';
export { formatJob, formatJobList, type JobView } from './output.ts';
export { run, USAGE } from './run.ts';
