import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Saves arrive as several events (truncate, write, rename): one reload per burst. */
const SETTLE_MS = 250;

/**
 * Calls `onChange` when the config file changes. The directory is watched, not the file: editors
 * save by writing a new file and renaming it over the old one, which a watch on the file loses.
 * Returns a function that stops watching.
 */
export function watchConfigFile(path: string, onChange: () => void): () => void {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file !== null && file.toString() !== name) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, SETTLE_MS);
      timer.unref();
    });
    // A watch error (the directory removed) ends watching; SIGHUP still reloads.
    watcher.on('error', () => watcher?.close());
  } catch {
    // Some file systems cannot be watched: SIGHUP remains.
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
  };
}
