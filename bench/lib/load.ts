import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
}

export interface LoadFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  requests: number;
}

/** Closed-loop load: each connection sends its next request when the previous answer arrives. */
export async function applyLoad(options: LoadOptions): Promise<LoadFigures> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
  });
  return {
    // Completed responses over the measured time, rather than the mean of per-second samples,
    // so a slow first or last second counts for what it is.
    rps: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}
