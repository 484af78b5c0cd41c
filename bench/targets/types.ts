/** A started bench target: where to send requests, which process to sample, how to stop it. */
export interface RunningTarget {
  /** `http://127.0.0.1:<port>` (requests go to `${baseUrl}/v1/chat/completions`). */
  baseUrl: string;
  /** Root pid of the target's processes (CPU/RSS sampled over it and its descendants). */
  pid: number;
  /** Headers for request `i` (keys rotate over `keyCount` distinct keys on the gateway). */
  headers(i: number, keyCount?: number): Record<string, string>;
  /** Gateway targets: a fresh funded key for the open-streams scenario and a check that it was charged. */
  streamsAccount?(): Promise<StreamsAccount>;
  stop(): Promise<void>;
}

export interface StreamsAccount {
  headers: Record<string, string>;
  /** Every one of `calls` streams charged exactly once and no reservation left open. */
  verifySettled(calls: number): Promise<{ ok: boolean; detail: string }>;
}
