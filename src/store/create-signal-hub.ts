import type { WorkSignals } from './store.js';
import type { WorkSignal } from './types.js';

/** The listeners of a store's work signals; a listener's failure is its own. */
interface SignalHub extends WorkSignals {
  emit(signal: WorkSignal): void;
  clear(): void;
}

export function createSignalHub(): SignalHub {
  const listeners = new Set<(signal: WorkSignal) => void>();
  return {
    emit(signal) {
      for (const listener of listeners) {
        try {
          listener(signal);
        } catch {
          // The work is committed whatever a listener does.
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    clear: () => listeners.clear(),
  };
}
