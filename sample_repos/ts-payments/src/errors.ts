export type PaymentErrorCode =
  | "customer_not_found"
  | "plan_not_found"
  | "card_declined"
  | "requires_action"
  | "already_subscribed"
  | "refund_exceeds_payment"
  | "invoice_not_open"
  | "provider_error";

export class PaymentError extends Error {
  constructor(
    public readonly code: PaymentErrorCode,
    message: string,
    public readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "PaymentError";
  }

  get isRetryable(): boolean {
    return this.code === "provider_error";
  }
}
