/**
 * Schema checks of rendered manifests without a cluster. The Kubernetes API kinds are validated by
 * `kubernetes-models` (the Kubernetes OpenAPI schemas compiled to validators), KEDA's kinds by
 * `@kubernetes-models/keda` and the Prometheus Operator's by `@kubernetes-models/prometheus-operator`
 * (each generated from the project's published CRDs). No npm package ships the CRDs of the RabbitMQ
 * Cluster Operator or CloudNativePG: their objects are checked against the part of each CRD Trawl
 * uses, written from the operators' API references (strict: a misspelt or unknown field fails),
 * with the types and enumerations those references give.
 */
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

/** The problems of one object against its schema ([] when valid, or the kind is unknown). */
export function schemaProblems(o: KubeObject): string[] {
  const key = `${o.apiVersion}/${o.kind}`;
  const Model = MODELS[key];
  if (Model) {
    try {
      new Model(o as never).validate();
      return [];
    } catch (e) {
      return [`${key} ${o.metadata.name}: ${(e as Error).message}`];
    }
  }
  const subset = SUBSETS[key];
  if (subset) {
    const r = subset.safeParse(o);
    return r.success
      ? []
      : r.error.issues.map((i) => `${key} ${o.metadata.name}: ${i.path.join('.')}: ${i.message}`);
  }
  return [`${key} ${o.metadata.name}: no schema for this kind`];
}
