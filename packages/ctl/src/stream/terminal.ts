// What the console needs from the local terminal; main.ts passes process.stdin/stdout.
export interface TerminalInput {
  readonly isTTY?: boolean | undefined;
  setRawMode?(raw: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'data' | 'end', listener: (...args: never[]) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface TerminalOutput {
  write(chunk: Buffer | string): boolean;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
}
