/** Entry point of the `trawl` command: wires the real process into run(). */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { run } from './run.ts';

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const code = await run(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  readStdin,
  readFile: (p) => readFile(p),
  listDir: async (p) => {
    try {
      if (!(await stat(p)).isDirectory()) return null;
    } catch {
      return null;
    }
    return (await readdir(p, { withFileTypes: true })).map((e) => ({
      name: e.name,
      dir: e.isDirectory(),
    }));
  },
  // `pnpm trawl` runs in the repository root: INIT_CWD is where the user typed the command.
  cwd: process.env.INIT_CWD ?? process.cwd(),
  spawn: (cmd, args, o) =>
    new Promise((resolve) => {
      const child = spawn(cmd, args, { cwd: o.cwd, stdio: 'inherit' });
      child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
      child.on('error', () => resolve(1));
    }),
});
process.exitCode = code;
