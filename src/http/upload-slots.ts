/**
 * Uploads received at once (issue 32): each one writes to the store as it arrives, and on the
 * embedded store that work shares the event loop. People imports and backfills draw on the same
 * slots: a workspace may receive IMPORT_UPLOADS_PER_WORKSPACE files at once, a process
 * IMPORT_UPLOADS_PER_PROCESS, whichever route they come through.
 */
export class UploadSlots {
  private readonly ofWorkspace = new Map<string, number>();
  private inProcess = 0;
  constructor(private readonly limits: { perWorkspace: number; perProcess: number }) {}

  /** A slot for one upload of this workspace, with the function that gives it back; undefined when none is free. */
  take(workspaceId: string): (() => void) | undefined {
    const held = this.ofWorkspace.get(workspaceId) ?? 0;
    if (held >= this.limits.perWorkspace || this.inProcess >= this.limits.perProcess) return undefined;
    this.ofWorkspace.set(workspaceId, held + 1);
    this.inProcess++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.inProcess--;
      const left = (this.ofWorkspace.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.ofWorkspace.set(workspaceId, left);
      else this.ofWorkspace.delete(workspaceId);
    };
  }
}
