/**
 * The Kubernetes manifests (deploy/kubernetes) as an operator relies on them, checked without a
 * cluster: every overlay renders with `kubectl kustomize`, every object passes the schema of its
 * kind (Kubernetes API, KEDA and Prometheus Operator CRDs, the RabbitMQ and CloudNativePG fields
 * Trawl uses), every container has probes on a route its service serves, requests and limits, a
 * read-only root filesystem and runs as non-root, every secret a container gets comes from a Secret
 * object (a `*_FILE` into a mounted Secret, never a value), and each service may reach only the
 * engines it reads a connection for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_SECRET_VARIABLES, SECRET_VARIABLES } from '@trawl/config';
import { topology } from '@trawl/contracts';
import { GMAIL_SECRET_FILES } from '@trawl/retriever-gmail';
import { GRAPH_SECRET_FILES } from '@trawl/retriever-graph';
import { IMAP_SECRET_FILES } from '@trawl/retriever-imap';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../e2e-run/helpers.ts';
import { requireComponent } from '../support/require-component.ts';
import { type KubeObject, kustomizeMajor, renderOverlay, renderWithComponents } from './render.ts';
import { schemaProblems } from './schemas.ts';

const major = kustomizeMajor();
const present = requireComponent(
  'kubectl with Kustomize 4 or newer',
  major !== null && major >= 4,
  `apt-get install kubernetes-client (kubectl kustomize); found ${major === null ? 'no kubectl' : `Kustomize v${major}`}`,
);

const OVERLAYS = ['production', 'managed-database'];
const ALL_COMPONENTS = [
  'rabbitmq',
  'cloudnative-pg',
  'redis',
  'keda',
  'monitoring',
  'retriever-imap',
  'retriever-smtp',
  'retriever-graph',
  'retriever-gmail',
];

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  securityContext?: {
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  exec?: unknown;
  tcpSocket?: unknown;
}
interface Volume {
  name: string;
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string }[] };
  projected?: {
    defaultMode?: number;
    sources: { secret?: { name: string; items?: { key: string; path: string }[] } }[];
  };
  emptyDir?: unknown;
}
interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; fsGroup?: number };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  automountServiceAccountToken?: boolean;
}
interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const workloads = (objs: KubeObject[]) =>
  objs.filter((o): o is Workload => o.kind === 'Deployment' || o.kind === 'StatefulSet');
const trawlWorkloads = (objs: KubeObject[]) =>
  workloads(objs).filter((w) => w.spec.template.metadata.labels['trawl.dev/tier'] === 'app');
const find = (objs: KubeObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name) as
    | (KubeObject & { spec: Record<string, never>; data?: Record<string, string> })
    | undefined;
const configMapData = (objs: KubeObject[], name: string): Record<string, string> =>
  (find(objs, 'ConfigMap', name)?.data as Record<string, string> | undefined) ?? {};

/** The value a container sees for a variable: its own env, else a ConfigMap it loads. */
function envValue(objs: KubeObject[], c: Container, name: string): string | undefined {
  const own = c.env?.find((e) => e.name === name);
  if (own) return own.value;
  for (const f of c.envFrom ?? []) {
    if (f.configMapRef) {
      const v = configMapData(objs, f.configMapRef.name)[name];
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

/** Files a container sees from Secret objects: mount path → the Secret and key behind it. */
function secretFiles(pod: PodSpec, c: Container): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of c.volumeMounts ?? []) {
    const v = pod.volumes?.find((x) => x.name === m.name);
    const sources = v?.secret
      ? [{ name: v.secret.secretName, items: v.secret.items }]
      : (v?.projected?.sources ?? []).map((s) => s.secret).filter((s) => s !== undefined);
    for (const s of sources) {
      for (const i of s.items ?? []) out.set(`${m.mountPath}/${i.path}`, `${s.name}/${i.key}`);
    }
  }
  return out;
}

describe.skipIf(!present)('Kubernetes manifests (deploy/kubernetes)', () => {
  const rendered = new Map<string, KubeObject[]>();
  const render = (name: string): KubeObject[] => {
    let objs = rendered.get(name);
    if (!objs) {
      objs = name === 'all components' ? renderWithComponents(ALL_COMPONENTS) : renderOverlay(name);
      rendered.set(name, objs);
    }
    return objs;
  };
  const EVERY = [...OVERLAYS, 'all components'];

  it.each(EVERY)('%s: renders, and every object passes the schema of its kind', (name) => {
    const objs = render(name);
    expect(objs.length).toBeGreaterThan(20);
    expect(objs.flatMap(schemaProblems)).toEqual([]);
  });

  it.each(EVERY)(
    '%s: every container has probes, requests and limits, a read-only root filesystem, and runs as non-root',
    (name) => {
      const problems: string[] = [];
      for (const w of workloads(render(name))) {
        const pod = w.spec.template.spec;
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const where = `${w.kind} ${w.metadata.name} / ${c.name}`;
          if (!c.readinessProbe) problems.push(`${where}: no readinessProbe`);
          if (!c.livenessProbe) problems.push(`${where}: no livenessProbe`);
          for (const r of ['cpu', 'memory']) {
            if (c.resources?.requests?.[r] === undefined)
              problems.push(`${where}: no ${r} request`);
            if (c.resources?.limits?.[r] === undefined) problems.push(`${where}: no ${r} limit`);
          }
          if (c.securityContext?.readOnlyRootFilesystem !== true)
            problems.push(`${where}: root filesystem not read-only`);
          if (c.securityContext?.allowPrivilegeEscalation !== false)
            problems.push(`${where}: privilege escalation not refused`);
          if (!c.securityContext?.capabilities?.drop?.includes('ALL'))
            problems.push(`${where}: capabilities not dropped`);
          const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
          if (nonRoot !== true) problems.push(`${where}: may run as root`);
          if ((pod.securityContext?.runAsUser ?? 1) === 0) problems.push(`${where}: runs as uid 0`);
        }
        if (w.spec.template.metadata.labels['trawl.dev/tier'] === 'app') {
          if (pod.automountServiceAccountToken !== false)
            problems.push(`${w.metadata.name}: mounts a Kubernetes API token it never uses`);
        }
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(EVERY)(
    '%s: every Trawl service is probed on /health at the port it listens on',
    (name) => {
      const objs = render(name);
      const problems: string[] = [];
      // The port variable each service reads (docker/healthcheck.mjs holds the same map).
      const PORT_VAR: Record<string, string> = {
        'api-gateway': 'API_GATEWAY_PORT',
        'analyzer-orchestrator': 'TRAWL_ORCHESTRATOR_PORT',
        analyzers: 'TRAWL_ANALYZERS_PORT',
        'mail-orchestrator': 'TRAWL_MAIL_ORCHESTRATOR_PORT',
        'retriever-imap': 'TRAWL_RETRIEVER_IMAP_PORT',
        'retriever-smtp': 'TRAWL_RETRIEVER_SMTP_PORT',
        'retriever-graph': 'TRAWL_RETRIEVER_GRAPH_PORT',
        'retriever-gmail': 'TRAWL_RETRIEVER_GMAIL_PORT',
      };
      for (const w of trawlWorkloads(objs)) {
        const c = w.spec.template.spec.containers[0] as Container;
        const service = c.args?.[0] ?? '';
        const portVar = PORT_VAR[service];
        if (!portVar) {
          problems.push(`${w.metadata.name}: runs unknown service ${service}`);
          continue;
        }
        const http = c.ports?.find((p) => p.name === 'http');
        const listens = envValue(objs, c, portVar);
        if (!http || String(http.containerPort) !== listens)
          problems.push(
            `${w.metadata.name}: port http ${http?.containerPort} but ${portVar}=${listens}`,
          );
        for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
          const get = c[kind]?.httpGet;
          if (get?.path !== '/health' || get.port !== 'http')
            problems.push(`${w.metadata.name}: ${kind} is not GET /health on port http`);
        }
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(EVERY)('%s: every secret comes from a Secret object, as a file', (name) => {
    const objs = render(name);
    const problems: string[] = [];
    // Every secret Trawl reads: the platform's and each retriever's own (each may be a file).
    const fileSecrets = new Set<string>([
      ...FILE_SECRET_VARIABLES,
      ...IMAP_SECRET_FILES,
      ...GRAPH_SECRET_FILES,
      ...GMAIL_SECRET_FILES,
    ]);
    const secretNames = new Set<string>([...SECRET_VARIABLES, ...fileSecrets]);
    // No ConfigMap carries a secret.
    for (const cm of objs.filter((o) => o.kind === 'ConfigMap')) {
      for (const k of Object.keys((cm.data as Record<string, string>) ?? {}))
        if (secretNames.has(k)) problems.push(`ConfigMap ${cm.metadata.name} holds ${k}`);
    }
    for (const w of workloads(objs)) {
      const pod = w.spec.template.spec;
      // The non-root user reads its secret files through the pod's group (fsGroup), never others.
      for (const v of pod.volumes ?? []) {
        const mode = v.secret ? v.secret.defaultMode : v.projected?.defaultMode;
        if (!v.secret && !v.projected) continue;
        if (mode === undefined || (mode & 0o040) === 0 || (mode & 0o007) !== 0)
          problems.push(
            `${w.metadata.name}: volume ${v.name} mode ${mode?.toString(8)} (want 0440)`,
          );
        if (pod.securityContext?.fsGroup === undefined)
          problems.push(`${w.metadata.name}: secret files without an fsGroup to read them by`);
      }
      for (const c of pod.containers) {
        const files = secretFiles(pod, c);
        for (const e of c.env ?? []) {
          const where = `${w.metadata.name} / ${c.name}: ${e.name}`;
          if (secretNames.has(e.name) && !e.valueFrom?.secretKeyRef)
            problems.push(`${where} is a secret given as a value`);
          if (e.name.endsWith('_FILE') && secretNames.has(e.name.slice(0, -5))) {
            if (!fileSecrets.has(e.name.slice(0, -5)))
              problems.push(`${where}: Trawl reads no such file variable`);
            if (!e.value || !files.has(e.value))
              problems.push(`${where}=${e.value} is not a file of a mounted Secret`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    // The gateway reads its secrets from these Secret keys (what docs/operations.md has you create).
    const gw = find(objs, 'Deployment', 'trawl-gateway') as unknown as Workload;
    const c = gw.spec.template.spec.containers[0] as Container;
    const files = secretFiles(gw.spec.template.spec, c);
    const fileOf = (v: string) => files.get(envValue(objs, c, `${v}_FILE`) ?? '');
    expect({
      SECRET_KEY: fileOf('SECRET_KEY'),
      DATABASE_URL: fileOf('DATABASE_URL'),
      RABBITMQ_URL: fileOf('RABBITMQ_URL'),
      REDIS_URL: fileOf('REDIS_URL'),
    }).toEqual({
      SECRET_KEY: 'trawl-secrets/secret-key',
      DATABASE_URL: 'trawl-db-app/uri',
      RABBITMQ_URL: 'trawl-broker/uri',
      REDIS_URL: 'trawl-redis/uri',
    });
  });

  it.each(EVERY)(
    '%s: each service may reach only the engines it reads a connection for',
    (name) => {
      const objs = render(name);
      const problems: string[] = [];
      const policies = objs.filter((o) => o.kind === 'NetworkPolicy') as (KubeObject & {
        spec: { podSelector: { matchLabels?: Record<string, string> }; policyTypes: string[] };
      })[];
      const selects = (sel: Record<string, string> | undefined, labels: Record<string, string>) =>
        Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
      for (const w of trawlWorkloads(objs)) {
        const labels = w.spec.template.metadata.labels;
        const c = w.spec.template.spec.containers[0] as Container;
        const denied = policies.some(
          (p) =>
            p.metadata.name === 'trawl-default-deny' &&
            selects(p.spec.podSelector.matchLabels, labels) &&
            p.spec.policyTypes.includes('Ingress') &&
            p.spec.policyTypes.includes('Egress'),
        );
        if (!denied) problems.push(`${w.metadata.name}: not under the default deny`);
        for (const [engine, variable] of [
          ['postgres', 'DATABASE_URL'],
          ['rabbitmq', 'RABBITMQ_URL'],
          ['redis', 'REDIS_URL'],
        ] as const) {
          const reads = envValue(objs, c, `${variable}_FILE`) !== undefined;
          const allowed = labels[`trawl.dev/${engine}`] === 'client';
          if (reads !== allowed)
            problems.push(
              `${w.metadata.name}: ${reads ? 'reads' : 'does not read'} ${variable} but ${allowed ? 'may' : 'may not'} reach ${engine}`,
            );
        }
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(OVERLAYS)(
    '%s: disruption budgets, the gateway autoscaler, KEDA on the analysis queue, 3-node engines',
    (name) => {
      const objs = render(name);
      // Every Trawl Deployment with more than one replica has a PodDisruptionBudget.
      for (const w of trawlWorkloads(objs).filter((x) => (x.spec.replicas ?? 1) > 1)) {
        const pdb = objs.find(
          (o) =>
            o.kind === 'PodDisruptionBudget' &&
            JSON.stringify((o.spec as { selector: unknown }).selector) ===
              JSON.stringify(w.spec.selector),
        );
        expect(pdb, `PodDisruptionBudget of ${w.metadata.name}`).toBeDefined();
      }
      const hpa = find(objs, 'HorizontalPodAutoscaler', 'trawl-gateway');
      expect(hpa?.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'trawl-gateway' });
      const so = find(objs, 'ScaledObject', 'trawl-analyzer-orchestrator') as unknown as {
        spec: {
          scaleTargetRef: { name: string };
          triggers: { type: string; metadata: Record<string, string> }[];
        };
      };
      expect(so.spec.scaleTargetRef.name).toBe('trawl-analyzer-orchestrator');
      expect(so.spec.triggers[0]?.type).toBe('rabbitmq');
      expect(so.spec.triggers[0]?.metadata.queueName).toBe(topology().queues.analysisRequests);
      const rabbit = find(objs, 'RabbitmqCluster', 'trawl-rabbitmq') as unknown as {
        spec: { replicas: number; rabbitmq: { additionalConfig: string } };
      };
      expect(rabbit.spec.replicas).toBe(3);
      expect(rabbit.spec.rabbitmq.additionalConfig).toMatch(
        /^cluster_partition_handling = pause_minority$/m,
      );
      if (name === 'production') {
        const db = find(objs, 'Cluster', 'trawl-db') as unknown as {
          spec: { instances: number; postgresql: { synchronous: { number: number } } };
        };
        expect(db.spec.instances).toBe(3);
        expect(db.spec.postgresql.synchronous.number).toBeGreaterThanOrEqual(1);
      }
    },
  );

  it('ships the same alert rules and dashboard as docker/ (PrometheusRule, dashboard ConfigMap)', () => {
    const objs = render('production');
    const rule = find(objs, 'PrometheusRule', 'trawl') as unknown as { spec: { groups: unknown } };
    const shipped = parse(readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8')) as {
      groups: unknown;
    };
    expect(rule.spec.groups).toEqual(shipped.groups);
    const dashboard = configMapData(objs, 'trawl-grafana-dashboard')['trawl.json'];
    expect(dashboard).toBe(readFileSync(join(ROOT, 'docker/grafana/trawl.json'), 'utf8'));
  });
});
