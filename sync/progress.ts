import type { Logger } from '../src/logger.js';

/**
 * Progress of a long sync for a person watching a terminal: pages and records per second,
 * at most every two seconds. Off when the output is not a terminal (cron, systemd, CI),
 * where the end-of-run summary is enough.
 */
export function progressReporter(logger: Logger, enabled: boolean, label: string) {
  const started = Date.now();
  let last = started;
  let pages = 0;
  let records = 0;
  return (pageRecords: number) => {
    pages += 1;
    records += pageRecords;
    const now = Date.now();
    if (!enabled || now - last < 2_000) return;
    last = now;
    const perSecond = Math.round(records / ((now - started) / 1000));
    logger.info({ progress: label, pages, records, perSecond }, `${label}: ${pages} pages, ${records} records, ${perSecond} records/s`);
  };
}
