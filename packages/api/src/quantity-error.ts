// The error every quantity function throws for input that is not a Kubernetes quantity.

export class QuantityError extends Error {
  readonly code = 'API_ERR_QUANTITY';
  /** The offending input, as given. */
  readonly input: string;

  constructor(input: string, reason: string, options?: { cause?: unknown }) {
    super(`invalid quantity ${JSON.stringify(input)}: ${reason}`, options);
    this.name = 'QuantityError';
    this.input = input;
  }
}
