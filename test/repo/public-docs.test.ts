import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e-run/helpers.ts';
import { workspaces } from './import-graph.ts';

// Issue 30: a package's public face is chosen and read in one place (ADR 012), each name with a
// line saying what it is. Every name a package's or service's `src/index.ts` exports has a TSDoc
// comment where it is declared (following re-exports to the declaration). Read with the
// compiler's parser only (no type checker), file by file, so it stays fast.

const parsed = new Map<string, ts.SourceFile>();
function sourceOf(file: string): ts.SourceFile {
  let sf = parsed.get(file);
  if (!sf) {
    sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    parsed.set(file, sf);
  }
  return sf;
}

const hasDoc = (node: ts.Node) =>
  ts.getJSDocCommentsAndTags(node).some((d) => ts.isJSDoc(d) && d.comment !== undefined);

/** `@trawl/x` and `@trawl/x/sub` as the file the package's `exports` names. */
const entryPoints = new Map(
  workspaces(ROOT).flatMap((w) =>
    [...w.exports].map(([sub, file]) => [
      sub === '.' ? w.name : `${w.name}/${sub.slice(2)}`,
      join(ROOT, file),
    ]),
  ),
);

/** A module specifier as the file it names; undefined for a dependency outside the repository. */
function resolveFile(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return entryPoints.get(specifier);
  const base = resolve(dirname(from), specifier);
  for (const f of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    if (existsSync(f) && f.match(/\.tsx?$/)) return f;
  }
  return undefined;
}

/** The declarations of `name` in `file`, re-exports followed; `undefined`: not found here. */
function declarations(file: string, name: string, seen = new Set<string>()): ts.Node[] {
  const key = `${file}#${name}`;
  if (seen.has(key)) return [];
  seen.add(key);
  const sf = sourceOf(file);
  const found: ts.Node[] = [];
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) {
        if (el.name.text !== name) continue;
        const original = (el.propertyName ?? el.name).text;
        const target = st.moduleSpecifier
          ? resolveFile(file, (st.moduleSpecifier as ts.StringLiteral).text)
          : file;
        if (st.moduleSpecifier && !target) continue; // a dependency's name
        if (target === file && !st.moduleSpecifier) {
          found.push(...localDeclarations(sf, original, file, seen));
        } else if (target) {
          found.push(...declarations(target, original, seen));
        }
      }
    }
  }
  found.push(...localDeclarations(sf, name, file, seen, true));
  return found;
}

/** Top-level declarations of `name` in `sf`; an import of it is followed to its source. */
function localDeclarations(
  sf: ts.SourceFile,
  name: string,
  file: string,
  seen: Set<string>,
  exportedOnly = false,
): ts.Node[] {
  const out: ts.Node[] = [];
  const exported = (n: ts.Node) =>
    !exportedOnly ||
    (ts.canHaveModifiers(n) &&
      (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword));
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.name.text === name && exported(st)) out.push(d);
      }
    } else if (
      (ts.isFunctionDeclaration(st) ||
        ts.isClassDeclaration(st) ||
        ts.isInterfaceDeclaration(st) ||
        ts.isTypeAliasDeclaration(st) ||
        ts.isEnumDeclaration(st)) &&
      st.name?.text === name &&
      exported(st)
    ) {
      out.push(st);
    } else if (!exportedOnly && ts.isImportDeclaration(st) && st.importClause?.namedBindings) {
      const nb = st.importClause.namedBindings;
      if (!ts.isNamedImports(nb)) continue;
      for (const el of nb.elements) {
        if (el.name.text !== name) continue;
        const target = resolveFile(file, (st.moduleSpecifier as ts.StringLiteral).text);
        if (target) out.push(...declarations(target, (el.propertyName ?? el.name).text, seen));
      }
    }
  }
  return out;
}

/** The names each package's and service's `src/index.ts` exports, with where each is declared. */
function publicNames(): { name: string; index: string; decls: ts.Node[] }[] {
  const out: { name: string; index: string; decls: ts.Node[] }[] = [];
  for (const w of workspaces(ROOT)) {
    const index = join(ROOT, w.dir, 'src/index.ts');
    if (!existsSync(index)) continue;
    const sf = sourceOf(index);
    const names = new Set<string>();
    for (const st of sf.statements) {
      if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) names.add(el.name.text);
      } else if (
        ts.canHaveModifiers(st) &&
        (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      ) {
        if (ts.isVariableStatement(st)) {
          for (const d of st.declarationList.declarations)
            if (ts.isIdentifier(d.name)) names.add(d.name.text);
        } else if ('name' in st && st.name && ts.isIdentifier(st.name as ts.Node)) {
          names.add((st.name as ts.Identifier).text);
        }
      }
    }
    for (const name of names) {
      out.push({ name, index: `${w.dir}/src/index.ts`, decls: declarations(index, name) });
    }
  }
  return out;
}

const relativeFile = (d: ts.Node) => d.getSourceFile().fileName.slice(ROOT.length + 1);

describe('public faces are documented', () => {
  const names = publicNames();

  it('every name an index.ts exports is found where it is declared', () => {
    expect(names.length).toBeGreaterThan(100);
    const lost = names.filter((n) => n.decls.length === 0).map((n) => `${n.index}: ${n.name}`);

    expect(lost).toEqual([]);
  });

  it('every name an index.ts exports has a TSDoc comment where it is declared', () => {
    const bare = names
      .filter((n) => n.decls.length > 0 && !n.decls.some(hasDoc))
      .map((n) => {
        const d = n.decls[0] as ts.Node;
        const line = d.getSourceFile().getLineAndCharacterOfPosition(d.getStart()).line + 1;
        return `${n.index}: ${n.name} (${relativeFile(d)}:${line})`;
      });
    expect(bare).toEqual([]);
  });
});
