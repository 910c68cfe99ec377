import type { EnvSource } from './env-reader.ts';

/** Where the tests' PostgreSQL, Redis and RabbitMQ are. */
export interface TestInfra {
  databaseUrl: string;
  redisUrl: string;
  rabbitmqUrl: string;
}

/** The tests' servers on 127.0.0.1 unless the environment says otherwise. */
export const TEST_INFRA_DEFAULTS: TestInfra = {
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/trawl_test',
  redisUrl: 'redis://127.0.0.1:6379/0',
  rabbitmqUrl: 'amqp://guest:guest@127.0.0.1:5672/trawl_test',
};

/** The servers integration tests use: TRAWL_TEST_DATABASE_URL / _REDIS_URL / _RABBITMQ_URL. */
export function testInfra(env: EnvSource = process.env): TestInfra {
  const pick = (name: string, def: string): string => {
    const v = env[name];
    return v === undefined || v === '' ? def : v;
  };
  return {
    databaseUrl: pick('TRAWL_TEST_DATABASE_URL', TEST_INFRA_DEFAULTS.databaseUrl),
    redisUrl: pick('TRAWL_TEST_REDIS_URL', TEST_INFRA_DEFAULTS.redisUrl),
    rabbitmqUrl: pick('TRAWL_TEST_RABBITMQ_URL', TEST_INFRA_DEFAULTS.rabbitmqUrl),
  };
}
