import Stripe from "stripe";

import { Injectable } from "../decorators";
import { PaymentError } from "../errors";

export interface StripeConfig {
  secretKey: string;
  webhookSecret: string;
  apiVersion?: Stripe.LatestApiVersion;
}

export function loadStripeConfig(env: NodeJS.ProcessEnv = process.env): StripeConfig {
  const secretKey = env.STRIPE_SECRET_KEY;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET;
  if (!secretKey || !webhookSecret) {
    throw new Error("STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET must be set");
  }
  return { secretKey, webhookSecret };
}

/**
 * Thin wrapper around the Stripe SDK: keeps the SDK out of the services, so
 * they can be tested with a fake, and turns SDK errors into PaymentErrors.
 */
@Injectable()
export class StripeClient {
  private readonly stripe: Stripe;
  private readonly webhookSecret: string;

  constructor(config: StripeConfig = loadStripeConfig()) {
    this.stripe = new Stripe(config.secretKey, { apiVersion: config.apiVersion ?? "2023-10-16", maxNetworkRetries: 0 });
    this.webhookSecret = config.webhookSecret;
  }

  async createCustomer(email: string, name: string, metadata: Record<string, string> = {}): Promise<string> {
    const customer = await this.call(() => this.stripe.customers.create({ email, name, metadata }));
    return customer.id;
  }

  async attachPaymentMethod(customerId: string, paymentMethodId: string): Promise<void> {
    await this.call(() => this.stripe.paymentMethods.attach(paymentMethodId, { customer: customerId }));
    await this.call(() =>
      this.stripe.customers.update(customerId, {
        invoice_settings: { default_payment_method: paymentMethodId },
      }),
    );
  }

  createSubscription(params: Stripe.SubscriptionCreateParams, idempotencyKey: string) {
    return this.call(() => this.stripe.subscriptions.create(params, { idempotencyKey }));
  }

  cancelSubscription(subscriptionId: string, atPeriodEnd: boolean) {
    return this.call(() =>
      atPeriodEnd
        ? this.stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true })
        : this.stripe.subscriptions.cancel(subscriptionId),
    );
  }

  createPaymentIntent(params: Stripe.PaymentIntentCreateParams, idempotencyKey: string) {
    return this.call(() => this.stripe.paymentIntents.create(params, { idempotencyKey }));
  }

  createRefund(paymentIntentId: string, amount: number, reason?: Stripe.RefundCreateParams.Reason) {
    return this.call(() => this.stripe.refunds.create({ payment_intent: paymentIntentId, amount, reason }));
  }

  finalizeInvoice(invoiceId: string) {
    return this.call(() => this.stripe.invoices.finalizeInvoice(invoiceId));
  }

  /**
   * Checks the signature header of an incoming webhook and returns the parsed
   * event; throws when the payload was not sent by Stripe.
   */
  constructEvent(payload: Buffer, signature: string): Stripe.Event {
    return this.stripe.webhooks.constructEvent(payload, signature, this.webhookSecret);
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof Stripe.errors.StripeCardError) {
        throw new PaymentError("card_declined", e.message, { declineCode: e.decline_code });
      }
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.code === "resource_missing") {
        throw new PaymentError("customer_not_found", e.message, { param: e.param });
      }
      // Rate limit / connection errors are rethrown untouched so @Retry can see them.
      throw e;
    }
  }
}
