import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The imports of the repository's TypeScript, read with the TypeScript compiler (issue 30): every
 * `import`/`export … from`, `import type`, `import('…')` call and `import('…').T` type, each resolved
 * to the file it names (relative paths, and `@trawl/*` through the package's `exports`). The
 * import-circle test and the public-face test read it; nothing here runs the code.
 */

/** One import of one file. */
export interface ImportEdge {
  /** The importing file, relative to the repository root (`/` separators). */
  from: string;
  /** What the source says (`./x.ts`, `@trawl/platform/testing`, `zod`). */
  specifier: string;
  /** The file it resolves to, relative to the root; undefined for a dependency outside the repo. */
  to: string | undefined;
}

/** A workspace package: its name, folder and public entry points (`exports`). */
export interface Workspace {
  name: string;
  /** Folder, relative to the root (`packages/platform`). */
  dir: string;
  /** Subpath (`.`, `./testing`) → file relative to the root. */
  exports: Map<string, string>;
}

const SOURCE = /\.(?:ts|tsx|mts)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'data', 'coverage', 'profiles', '.git']);
/** The folders holding the repository's own code. */
const CODE_ROOTS = ['packages', 'services', 'bench', 'test', 'scripts'];

const slash = (p: string) => p.split('\\').join('/');

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name), out);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(join(dir, entry.name));
    }
  }
}

/** The TypeScript files of the repository (not node_modules, dist or data), relative to `root`. */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  for (const r of CODE_ROOTS) if (existsSync(join(root, r))) walk(join(root, r), out);
  return out.map((f) => slash(relative(root, f))).sort();
}

/** The workspace packages (`packages/*`, `services/*`) with their declared entry points. */
export function workspaces(root: string): Workspace[] {
  const out: Workspace[] = [];
  for (const floor of ['packages', 'services']) {
    for (const name of readdirSync(join(root, floor))) {
      const file = join(root, floor, name, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
        name: string;
        exports?: Record<string, string> | string;
      };
      const dir = `${floor}/${name}`;
      const raw = typeof pkg.exports === 'string' ? { '.': pkg.exports } : (pkg.exports ?? {});
      const exports = new Map(
        Object.entries(raw).map(([sub, target]) => [sub, slash(join(dir, target))]),
      );
      out.push({ name: pkg.name, dir, exports });
    }
  }
  return out;
}

/**
 * The specifiers of one file's imports: `import`/`export … from` (also `type`), `import('…')` calls
 * and `import('…').T` types, as the compiler's pre-processor reads them (not in strings or comments).
 */
export function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

const EXTENSIONS = ['', '.ts', '.tsx', '/index.ts'];

function resolveRelative(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [
    ...EXTENSIONS.map((e) => base + e),
    ...(/\.[cm]?js$/.test(base) ? [base.replace(/\.[cm]?js$/, '.ts')] : []),
  ];
  for (const c of candidates) {
    if (existsSync(c) && statSync(c).isFile()) return slash(relative(root, c));
  }
  return undefined;
}

/** The file a `@trawl/...` specifier reaches, or undefined when no package declares it. */
function resolvePackage(spaces: Workspace[], specifier: string): string | undefined {
  for (const w of spaces) {
    if (specifier !== w.name && !specifier.startsWith(`${w.name}/`)) continue;
    const sub = `.${specifier.slice(w.name.length)}`;
    return w.exports.get(sub);
  }
  return undefined;
}

/** Every import of every TypeScript file of the repository, resolved where it stays inside it. */
export function importGraph(root: string): ImportEdge[] {
  const spaces = workspaces(root);
  const edges: ImportEdge[] = [];
  for (const from of sourceFiles(root)) {
    const text = readFileSync(join(root, from), 'utf8');
    for (const specifier of specifiersOf(text)) {
      const to = specifier.startsWith('.')
        ? resolveRelative(root, from, specifier)
        : resolvePackage(spaces, specifier);
      edges.push({ from, specifier, to });
    }
  }
  return edges;
}

/**
 * The import circles of a graph: each strongly connected group of two or more files (or a file that
 * imports itself), as a path that walks the circle and ends where it began (Tarjan's algorithm,
 * iterative so a deep graph cannot overflow the stack).
 */
export function findCircles(edges: ReadonlyArray<Pick<ImportEdge, 'from' | 'to'>>): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.to === undefined) continue;
    const list = next.get(e.from) ?? [];
    list.push(e.to);
    next.set(e.from, list);
    if (!next.has(e.to)) next.set(e.to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = next.get(top.node) ?? [];
      if (top.i < out.length) {
        const n = out[top.i++]!;
        if (!index.has(n)) {
          index.set(n, counter);
          low.set(n, counter++);
          stack.push(n);
          onStack.add(n);
          work.push({ node: n, i: 0 });
        } else if (onStack.has(n)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(n)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const group: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          group.push(n);
        } while (n !== top.node);
        const selfLoop = (next.get(top.node) ?? []).includes(top.node);
        if (group.length > 1 || selfLoop) groups.push(group);
      }
    }
  }
  return groups.map((g) => walkCircle(g, next));
}

/** A path through a strongly connected group that starts and ends at its first file (by name). */
function walkCircle(group: string[], next: Map<string, string[]>): string[] {
  const members = new Set(group);
  const start = [...group].sort()[0]!;
  // breadth-first from start back to start, inside the group
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const m of next.get(n) ?? []) {
      if (!members.has(m)) continue;
      if (m === start) {
        const path = [start];
        for (let at = n; at !== start; at = prev.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!prev.has(m)) {
        prev.set(m, n);
        queue.push(m);
      }
    }
  }
  return [start, start];
}

/**
 * The public-face rule (issue 30): whether an import reaches past another package's declared entry
 * points. It covers the packages' and services' source and the benches: they reach another
 * workspace only by its name and an entry point of its `exports`, and a bench never uses a test
 * helper of the root's `test/`. Tests are free to use what they test.
 */
export function reachesInside(spaces: Workspace[]): (e: ImportEdge) => boolean {
  const entries = new Set(spaces.flatMap((w) => [...w.exports.values()]));
  const ownerOf = (file: string) => spaces.find((w) => file.startsWith(`${w.dir}/`))?.dir ?? '.';
  const governed = (file: string) =>
    file.startsWith('bench/') || /^(?:packages|services)\/[^/]+\/src\//.test(file);
  return (e) => {
    if (!e.to || !governed(e.from)) return false;
    if (e.from.startsWith('bench/') && e.to.startsWith('test/')) return true;
    if (ownerOf(e.from) === ownerOf(e.to)) return false;
    return e.specifier.startsWith('.') || !entries.has(e.to);
  };
}
