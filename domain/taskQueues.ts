// Activities that wait for long (a capture followed to its depth, a webhook endpoint's dispatcher)
// run on a task queue of their own beside the worker's, served by the same processes with their own
// slots: however many captures wait at once, the relayer's and the drafts' activities always find a
// slot (on one queue, 100 waiting captures took every slot, the relayer could not send, and they
// waited for ever).
export function followTaskQueue(taskQueue: string): string {
  return `${taskQueue}-follow`;
}
