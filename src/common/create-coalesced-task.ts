/**
 * Wraps an async task so that triggering it while it runs does not start a second copy: the
 * triggers made meanwhile cause exactly one more run once the current one ends.
 */
export function createCoalescedTask(task: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const trigger = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void task().finally(() => {
      running = false;
      if (again) {
        again = false;
        trigger();
      }
    });
  };
  return trigger;
}
