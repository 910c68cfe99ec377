export {
  type GmailServerStats,
  startTestGmailServer,
  type TestGmailServer,
} from './gmail-server.ts';
