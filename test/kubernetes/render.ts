/**
 * Renders the Kustomize overlays of deploy/kubernetes with `kubectl kustomize` (Debian's
 * kubernetes-client, or any kubectl with Kustomize 4 or newer), as an operator would before
 * `kubectl apply`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../e2e-run/helpers.ts';

const KUBE_DIR = join(ROOT, 'deploy', 'kubernetes');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** The Kustomize version `kubectl` embeds (major), or null without kubectl. */
export function kustomizeMajor(): number | null {
  try {
    const out = execFileSync('kubectl', ['version', '--client'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 20_000,
    });
    const m = /Kustomize Version: v(\d+)/.exec(out);
    return m ? Number(m[1]) : 0;
  } catch {
    return null;
  }
}

function kustomize(dir: string): KubeObject[] {
  const out = execFileSync('kubectl', ['kustomize', dir], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    timeout: 60_000,
  });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

/** One overlay of deploy/kubernetes/overlays, rendered. */
export function renderOverlay(name: string): KubeObject[] {
  return kustomize(join(KUBE_DIR, 'overlays', name));
}

/**
 * The base with the given components (every component of deploy/kubernetes/components when none
 * is named), through a throwaway overlay: the optional components are checked too, not only those
 * an overlay of the repository picks.
 */
export function renderWithComponents(components: string[]): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-kustomize-'));
  try {
    const rel = (p: string) => relative(dir, join(KUBE_DIR, p));
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'namespace: trawl',
        `resources: [${rel('base')}]`,
        `components: [${components.map((c) => rel(join('components', c))).join(', ')}]`,
        '',
      ].join('\n'),
    );
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
