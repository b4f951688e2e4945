/** One JSON log line as pino writes it. */
export interface LogLine {
  level: number;
  msg?: string;
  reqId?: string;
  err?: { type?: string; message?: string; stack?: string };
  [field: string]: unknown;
}

/** A log destination that keeps what the service writes, for tests that read its logs. */
export class LogCapture {
  readonly raw: string[] = [];

  write(chunk: string): void {
    this.raw.push(chunk);
  }

  /** Every line, parsed; a line that is not one JSON object fails the test that reads it. */
  lines(): LogLine[] {
    return this.raw
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }

  forRequest(requestId: string): LogLine[] {
    return this.lines().filter((line) => line.reqId === requestId);
  }
}
