import { Injectable } from "../decorators";
import { Customer } from "../models/customer";
import { Invoice, InvoiceStatus } from "../models/invoice";
import { Payment, PaymentStatus, Refund } from "../models/payment";
import { Plan, Subscription, SubscriptionStatus } from "../models/subscription";
import { InMemoryRepository } from "./baseRepository";

/**
 * Persistence for everything the billing services touch: customers, plans,
 * subscriptions, payments, refunds and invoices.
 */
@Injectable()
export class PaymentRepository {
  readonly customers = new InMemoryRepository<Customer>("customers");
  readonly plans = new InMemoryRepository<Plan>("plans");
  readonly subscriptions = new InMemoryRepository<Subscription>("subscriptions");
  readonly payments = new InMemoryRepository<Payment>("payments");
  readonly refunds = new InMemoryRepository<Refund>("refunds");
  readonly invoices = new InMemoryRepository<Invoice>("invoices");

  findCustomer(customerId: string): Promise<Customer | undefined> {
    return this.customers.findById(customerId);
  }

  findPlan(planId: string): Promise<Plan | undefined> {
    return this.plans.findById(planId);
  }

  /**
   * Returns the subscription of a customer that still grants access
   * (trialing, active or past due), if there is one.
   */
  async findLiveSubscription(customerId: string): Promise<Subscription | undefined> {
    const subs = await this.subscriptions.findMany({ where: { customerId } });
    const live = new Set([SubscriptionStatus.Trialing, SubscriptionStatus.Active, SubscriptionStatus.PastDue]);
    return subs.find((s) => live.has(s.status));
  }

  findSubscriptionByStripeId(stripeSubscriptionId: string): Promise<Subscription | undefined> {
    return this.subscriptions.findOne({ stripeSubscriptionId });
  }

  saveSubscription(subscription: Subscription): Promise<Subscription> {
    return this.subscriptions.save(subscription);
  }

  savePayment(payment: Payment): Promise<Payment> {
    return this.payments.save(payment);
  }

  async markPaymentStatus(paymentId: string, status: PaymentStatus, failureReason?: string): Promise<Payment> {
    return this.payments.update(paymentId, { status, failureReason, updatedAt: new Date() });
  }

  findPaymentByIntent(stripePaymentIntentId: string): Promise<Payment | undefined> {
    return this.payments.findOne({ stripePaymentIntentId });
  }

  async refundsForPayment(paymentId: string): Promise<Refund[]> {
    return this.refunds.findMany({ where: { paymentId }, orderBy: "createdAt" });
  }

  async openInvoices(customerId: string): Promise<Invoice[]> {
    return this.invoices.findMany({ where: { customerId, status: InvoiceStatus.Open }, orderBy: "dueDate" });
  }
}
