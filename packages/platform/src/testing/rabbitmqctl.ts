import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Connection pids whose client_properties carry this connection_name (rabbitmqctl on this host). */
export async function findConnections(connectionName: string): Promise<string[]> {
  const { stdout } = await run(
    'rabbitmqctl',
    ['list_connections', '-q', 'pid', 'client_properties'],
    {
      timeout: 60_000,
    },
  );
  const needle = `{"connection_name","${connectionName}"}`;
  return stdout
    .split('\n')
    .filter((line) => line.includes(needle))
    .map((line) => line.split('\t')[0] as string)
    .filter((pid) => pid.startsWith('<'));
}

/**
 * Closes, from the server side, the connections with this connection_name (as an operator or a
 * failing node would). Never restarts the server: others use it.
 */
export async function closeConnectionsByName(
  connectionName: string,
  reason = 'test',
): Promise<number> {
  const pids = await findConnections(connectionName);
  for (const pid of pids) {
    await run('rabbitmqctl', ['close_connection', pid, reason], { timeout: 60_000 });
  }
  return pids.length;
}
