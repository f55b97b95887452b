import { randomUUID } from "crypto";
import type Stripe from "stripe";

import { StripeClient } from "../clients/stripe";
import { Injectable, Log, Retry } from "../decorators";
import { PaymentError } from "../errors";
import { ChargeRequest, Payment, PaymentMethodType, PaymentStatus } from "../models/payment";
import { CreateSubscriptionInput, Subscription, SubscriptionStatus } from "../models/subscription";
import { PaymentRepository } from "../repositories/paymentRepository";
import { err, ok, Result } from "../types/result";
import { money } from "../utils/money";

export interface SubscriptionCreated {
  subscription: Subscription;
  clientSecret?: string; // present when the first payment needs 3-D Secure
}

// Stripe statuses we map one-to-one; anything else is treated as incomplete.
const STATUS_MAP: Record<string, SubscriptionStatus> = {
  trialing: SubscriptionStatus.Trialing,
  active: SubscriptionStatus.Active,
  past_due: SubscriptionStatus.PastDue,
  canceled: SubscriptionStatus.Canceled,
  unpaid: SubscriptionStatus.PastDue,
};

export function toSubscriptionStatus(stripeStatus: string): SubscriptionStatus {
  return STATUS_MAP[stripeStatus] ?? SubscriptionStatus.Incomplete;
}

@Injectable()
export class PaymentService {
  constructor(
    private readonly stripe: StripeClient,
    private readonly repo: PaymentRepository,
  ) {}

  /**
   * Signs a customer up for a plan: creates the provider customer if needed,
   * attaches the payment method, starts the subscription with an
   * idempotency key and records it locally.
   */
  @Retry(3)
  @Log()
  async createSubscription(input: CreateSubscriptionInput): Promise<Result<SubscriptionCreated, PaymentError>> {
    const customer = await this.repo.findCustomer(input.customerId);
    if (!customer) {
      return err(new PaymentError("customer_not_found", `No customer ${input.customerId}`));
    }
    const plan = await this.repo.findPlan(input.planId);
    if (!plan) {
      return err(new PaymentError("plan_not_found", `No plan ${input.planId}`));
    }
    const existing = await this.repo.findLiveSubscription(customer.id);
    if (existing) {
      return err(new PaymentError("already_subscribed", "Customer already has a live subscription", { subscriptionId: existing.id }));
    }

    let stripeCustomerId = customer.stripeCustomerId;
    if (!stripeCustomerId) {
      stripeCustomerId = await this.stripe.createCustomer(customer.email, customer.name, { customerId: customer.id });
      await this.repo.customers.update(customer.id, { stripeCustomerId });
    }
    if (input.paymentMethodId) {
      await this.stripe.attachPaymentMethod(stripeCustomerId, input.paymentMethodId);
    }

    const params: Stripe.SubscriptionCreateParams = {
      customer: stripeCustomerId,
      items: [{ price: plan.stripePriceId, quantity: input.quantity ?? 1 }],
      payment_behavior: "default_incomplete",
      expand: ["latest_invoice.payment_intent"],
      metadata: { customerId: customer.id, planId: plan.id },
    };
    if (plan.trialDays) params.trial_period_days = plan.trialDays;
    if (input.couponCode) params.coupon = input.couponCode;

    let created: Stripe.Subscription;
    try {
      created = await this.stripe.createSubscription(params, `sub:${customer.id}:${plan.id}`);
    } catch (e) {
      if (e instanceof PaymentError) return err(e);
      throw e;
    }

    const subscription = await this.repo.saveSubscription({
      id: randomUUID(),
      customerId: customer.id,
      planId: plan.id,
      status: toSubscriptionStatus(created.status),
      stripeSubscriptionId: created.id,
      currentPeriodStart: new Date(created.current_period_start * 1000),
      currentPeriodEnd: new Date(created.current_period_end * 1000),
      cancelAtPeriodEnd: created.cancel_at_period_end,
      quantity: input.quantity ?? 1,
      createdAt: new Date(),
    });

    const invoice = created.latest_invoice as Stripe.Invoice | null;
    const intent = invoice?.payment_intent as Stripe.PaymentIntent | null;
    return ok({ subscription, clientSecret: intent?.status === "requires_action" ? intent.client_secret ?? undefined : undefined });
  }

  async cancelSubscription(subscriptionId: string, { immediately = false } = {}): Promise<Subscription> {
    const sub = await this.repo.subscriptions.getById(subscriptionId);
    if (sub.status === SubscriptionStatus.Canceled) return sub;
    const updated = await this.stripe.cancelSubscription(sub.stripeSubscriptionId, !immediately);
    return this.repo.subscriptions.update(sub.id, {
      status: toSubscriptionStatus(updated.status),
      cancelAtPeriodEnd: updated.cancel_at_period_end,
    });
  }

  /**
   * Moves an existing subscription to another plan, prorating the
   * difference on the next invoice.
   */
  async changePlan(subscriptionId: string, newPlanId: string): Promise<Result<Subscription, PaymentError>> {
    const sub = await this.repo.subscriptions.getById(subscriptionId);
    const plan = await this.repo.findPlan(newPlanId);
    if (!plan) return err(new PaymentError("plan_not_found", `No plan ${newPlanId}`));
    if (plan.id === sub.planId) return ok(sub);
    const created = await this.stripe.createSubscription(
      {
        customer: (await this.repo.customers.getById(sub.customerId)).stripeCustomerId!,
        items: [{ price: plan.stripePriceId, quantity: sub.quantity }],
        proration_behavior: "create_prorations",
      },
      `change:${sub.id}:${plan.id}`,
    );
    await this.stripe.cancelSubscription(sub.stripeSubscriptionId, false);
    const next = await this.repo.subscriptions.update(sub.id, {
      planId: plan.id,
      stripeSubscriptionId: created.id,
      status: toSubscriptionStatus(created.status),
    });
    return ok(next);
  }

  /**
   * Charges a customer once, outside of any subscription, using their saved
   * default payment method. Declines are returned as a failed result and the
   * attempt is recorded either way.
   */
  @Retry(3)
  async chargeCustomer(request: ChargeRequest): Promise<Result<Payment, PaymentError>> {
    const customer = await this.repo.findCustomer(request.customerId);
    if (!customer?.stripeCustomerId || !customer.defaultPaymentMethodId) {
      return err(new PaymentError("customer_not_found", "Customer has no saved payment method"));
    }
    const now = new Date();
    const payment: Payment = {
      id: randomUUID(),
      customerId: customer.id,
      amount: money(request.amount, request.currency),
      status: PaymentStatus.Pending,
      method: PaymentMethodType.Card,
      refundedAmount: 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.repo.savePayment(payment);

    try {
      const intent = await this.stripe.createPaymentIntent(
        {
          amount: request.amount,
          currency: request.currency,
          customer: customer.stripeCustomerId,
          payment_method: customer.defaultPaymentMethodId,
          off_session: true,
          confirm: true,
          description: request.description,
        },
        request.idempotencyKey,
      );
      const status = intent.status === "succeeded" ? PaymentStatus.Succeeded : PaymentStatus.RequiresAction;
      return ok(await this.repo.payments.update(payment.id, { status, stripePaymentIntentId: intent.id, updatedAt: new Date() }));
    } catch (e) {
      if (e instanceof PaymentError) {
        await this.repo.markPaymentStatus(payment.id, PaymentStatus.Failed, e.message);
        return err(e);
      }
      throw e;
    }
  }

  /**
   * Applies a verified provider webhook event to the local state:
   * subscription updates, successful and failed payments.
   */
  async handleWebhook(payload: Buffer, signature: string): Promise<void> {
    const event = this.stripe.constructEvent(payload, signature);
    switch (event.type) {
      case "customer.subscription.updated":
      case "customer.subscription.deleted": {
        const data = event.data.object as Stripe.Subscription;
        const sub = await this.repo.findSubscriptionByStripeId(data.id);
        if (!sub) return;
        await this.repo.subscriptions.update(sub.id, {
          status: toSubscriptionStatus(data.status),
          currentPeriodEnd: new Date(data.current_period_end * 1000),
          cancelAtPeriodEnd: data.cancel_at_period_end,
        });
        return;
      }
      case "payment_intent.succeeded":
      case "payment_intent.payment_failed": {
        const intent = event.data.object as Stripe.PaymentIntent;
        const payment = await this.repo.findPaymentByIntent(intent.id);
        if (!payment) return;
        const failed = event.type === "payment_intent.payment_failed";
        await this.repo.markPaymentStatus(
          payment.id,
          failed ? PaymentStatus.Failed : PaymentStatus.Succeeded,
          failed ? intent.last_payment_error?.message : undefined,
        );
        return;
      }
      default:
        // Unhandled event types are acknowledged so Stripe stops resending them.
        return;
    }
  }

  get provider(): string {
    return "stripe";
  }
}
