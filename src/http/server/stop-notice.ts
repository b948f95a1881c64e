/*
 * The notice a stopping process gives the balancer in front of it. A balancer learns that a
 * server is going from its health check, not from refused connections (which it sees only once
 * requests have already failed): so on SIGTERM the process first answers /health with 503
 * `draining` while it keeps serving everything else, for SHUTDOWN_DELAY_MS, long enough for the
 * health check to take it out of rotation, and only then stops accepting and drains
 * (src/http/server/drain.ts). When nothing asked /health in the last minute, no balancer is
 * watching it and the wait would only slow the stop down: it is skipped.
 */

/** How recent a /health request must be for the process to count as watched by a balancer. */
export const WATCHED_WITHIN_MS = 60_000;

export class StopNotice {
  private lastHealthCheck = Number.NEGATIVE_INFINITY;
  private announced = false;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** /health was asked: a balancer or a probe is watching. */
  healthChecked(): void {
    this.lastHealthCheck = this.now();
  }

  /** From now on /health answers 503 `draining`. */
  announce(): void {
    this.announced = true;
  }

  get stopping(): boolean {
    return this.announced;
  }

  /** How long to keep serving once announced: `configuredMs`, or 0 when no one watches /health. */
  delayMs(configuredMs: number): number {
    return this.now() - this.lastHealthCheck <= WATCHED_WITHIN_MS ? configuredMs : 0;
  }
}
