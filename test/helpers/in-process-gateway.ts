import { createLog } from '../../src/common/log.js';
import { readConfig, type LoadedConfig } from '../../src/config/index.js';
import { startGateway, type Gateway, type GatewayDeps } from '../../src/main.js';
import { createTempConfig, type ConfigDoc, type TempConfig } from './temp-config.js';

/** A gateway running inside the test process on an ephemeral port, with its own temp dir. */
export interface TestGateway {
  port: number;
  gateway: Gateway;
  loaded: LoadedConfig;
  temp: TempConfig;
  /** Closes the gateway and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Writes `config` to a temp dir, validates it as the CLI would, and starts the gateway on port 0. */
export async function startTestGateway(
  config: ConfigDoc,
  options: { runtime?: NonNullable<GatewayDeps['runtime']>; env?: Record<string, string> } = {},
): Promise<TestGateway> {
  const temp = createTempConfig(config);
  let gateway: Gateway;
  let loaded: LoadedConfig;
  try {
    loaded = readConfig(temp.path, options.env ?? {});
    gateway = await startGateway(loaded, {
      port: 0,
      log: createLog({ level: 'silent' }),
      ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
    });
  } catch (error) {
    temp.cleanup();
    throw error;
  }
  let stopped = false;
  return {
    port: gateway.port,
    gateway,
    loaded,
    temp,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await gateway.close();
      } finally {
        temp.cleanup();
      }
    },
  };
}
