// What a command hands back to the CLI: the response for -o json/yaml, and the human text
// for stdout plus an optional note for stderr (kubectl's "No resources found").
export interface CommandResult {
  readonly data: unknown;
  readonly text: string;
  readonly note: string;
}
