import type { Clock } from '../../common/clock.js';
import type { Store } from '../store.js';

export interface PostgresStoreOptions {
  url: string;
  schema: string;
  poolSize: number;
  mode: 'serve' | 'read' | 'write';
  clock?: Clock;
}

export async function createPostgresStore(_options: PostgresStoreOptions): Promise<Store> {
  throw new Error('store.driver "postgres" is not available in this build yet');
}
