/** A refusal of a workspace administration command (the CLI prints its message and exits 1). */
export class AdminError extends Error {}
