/**
 * What the load generators of bench/setups print: one JSON line with the figures of an autocannon
 * result, read by bench/lib.ts `lastJsonLine`.
 */
export function printFigures(result) {
  console.log(
    JSON.stringify({
      requestsPerSecond: result.requests.total / result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      bytes: result.throughput.total,
      statusCodes: result.statusCodeStats,
    }),
  );
}
