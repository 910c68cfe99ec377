export {
  type GraphServerStats,
  startTestGraphServer,
  type TestGraphServer,
} from './graph-server.ts';
