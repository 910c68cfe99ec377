/**
 * Schema checks of rendered manifests without a cluster. The Kubernetes API kinds are validated by
 * `kubernetes-models` (the Kubernetes OpenAPI schemas compiled to validators), KEDA's kinds by
 * `@kubernetes-models/keda` and the Prometheus Operator's by `@kubernetes-models/prometheus-operator`
 * and CloudNativePG's by `@kubernetes-models/cloudnative-pg` (each generated from the project's
 * published CRDs). These validators check types, formats, enumerations and required fields, not
 * unknown fields; so the custom resources Trawl writes are also checked against a strict schema of
 * the fields Trawl uses (a misspelt field fails), written from the operators' API references. No
 * npm package ships the RabbitMQ Cluster Operator's CRD: RabbitmqCluster has only the strict one.
 */
import { Cluster } from '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { z } from 'zod';
import type { KubeObject } from './render.ts';

interface Validating {
  validate(): void;
}

const MODELS: Record<string, new (data: never) => Validating> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'postgresql.cnpg.io/v1/Cluster': Cluster,
};

const Metadata = z.strictObject({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
const Quantity = z.union([z.string().regex(/^\d+(\.\d+)?(m|Ki|Mi|Gi|Ti|k|M|G)?$/), z.number()]);
const Resources = z.strictObject({
  requests: z.record(z.enum(['cpu', 'memory']), Quantity).optional(),
  limits: z.record(z.enum(['cpu', 'memory']), Quantity).optional(),
});
const LabelSelector = z.strictObject({ matchLabels: z.record(z.string(), z.string()) });
const PodAffinityTerm = z.strictObject({
  topologyKey: z.string(),
  labelSelector: LabelSelector,
});

/** rabbitmq.com/v1beta1 RabbitmqCluster: the fields Trawl sets (RabbitMQ Cluster Operator API). */
const RabbitmqCluster = z.strictObject({
  apiVersion: z.literal('rabbitmq.com/v1beta1'),
  kind: z.literal('RabbitmqCluster'),
  metadata: Metadata,
  spec: z.strictObject({
    replicas: z.number().int().min(0),
    image: z.string().optional(),
    resources: Resources.optional(),
    persistence: z
      .strictObject({ storage: Quantity, storageClassName: z.string().optional() })
      .optional(),
    rabbitmq: z
      .strictObject({
        additionalConfig: z.string().optional(),
        additionalPlugins: z.array(z.string()).optional(),
        advancedConfig: z.string().optional(),
      })
      .optional(),
    affinity: z
      .strictObject({
        podAntiAffinity: z.strictObject({
          requiredDuringSchedulingIgnoredDuringExecution: z.array(PodAffinityTerm),
        }),
      })
      .optional(),
  }),
});

/** postgresql.cnpg.io/v1 Cluster: the fields Trawl sets (CloudNativePG API reference, 1.24+). */
const CnpgCluster = z.strictObject({
  apiVersion: z.literal('postgresql.cnpg.io/v1'),
  kind: z.literal('Cluster'),
  metadata: Metadata,
  spec: z.strictObject({
    instances: z.number().int().min(1),
    imageName: z.string().optional(),
    postgresql: z
      .strictObject({
        parameters: z.record(z.string(), z.string()).optional(),
        synchronous: z
          .strictObject({
            method: z.enum(['any', 'first']),
            number: z.number().int().min(1),
          })
          .optional(),
      })
      .optional(),
    bootstrap: z
      .strictObject({
        initdb: z.strictObject({ database: z.string(), owner: z.string() }),
      })
      .optional(),
    storage: z.strictObject({ size: Quantity, storageClass: z.string().optional() }),
    resources: Resources.optional(),
    affinity: z
      .strictObject({
        enablePodAntiAffinity: z.boolean().optional(),
        topologyKey: z.string().optional(),
        podAntiAffinityType: z.enum(['preferred', 'required']).optional(),
      })
      .optional(),
  }),
});

const SUBSETS: Record<string, z.ZodType> = {
  'rabbitmq.com/v1beta1/RabbitmqCluster': RabbitmqCluster,
  'postgresql.cnpg.io/v1/Cluster': CnpgCluster,
};

/** The problems of one object against its schema(s) ([] when valid). */
export function schemaProblems(o: KubeObject): string[] {
  const key = `${o.apiVersion}/${o.kind}`;
  const Model = MODELS[key];
  const subset = SUBSETS[key];
  if (!Model && !subset) return [`${key} ${o.metadata.name}: no schema for this kind`];
  const problems: string[] = [];
  if (Model) {
    try {
      new Model(o as never).validate();
    } catch (e) {
      problems.push(`${key} ${o.metadata.name}: ${(e as Error).message}`);
    }
  }
  const r = subset?.safeParse(o);
  for (const i of r?.error?.issues ?? [])
    problems.push(`${key} ${o.metadata.name}: ${i.path.join('.')}: ${i.message}`);
  return problems;
}
