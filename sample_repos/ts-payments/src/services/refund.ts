import { randomUUID } from "crypto";

import { StripeClient } from "../clients/stripe";
import { Injectable, Retry } from "../decorators";
import { PaymentError } from "../errors";
import { Payment, PaymentStatus, Refund, RefundReason } from "../models/payment";
import { PaymentRepository } from "../repositories/paymentRepository";
import { err, ok, Result } from "../types/result";
import { money, Money, subtractMoney } from "../utils/money";

const REFUND_WINDOW_DAYS = 180;

export function refundableAmount(payment: Payment): Money {
  return subtractMoney(payment.amount, money(payment.refundedAmount, payment.amount.currency));
}

function withinRefundWindow(payment: Payment, now: Date): boolean {
  const ageDays = (now.getTime() - payment.createdAt.getTime()) / (24 * 3600 * 1000);
  return ageDays <= REFUND_WINDOW_DAYS;
}

@Injectable()
export class RefundService {
  constructor(
    private readonly repo: PaymentRepository,
    private readonly stripe: StripeClient,
  ) {}

  /**
   * Gives money back on a succeeded payment, fully or in part. Rejects
   * amounts above what is left to refund and payments older than the refund
   * window.
   */
  @Retry(3)
  async refundPayment(
    paymentId: string,
    amount?: number,
    reason: RefundReason = RefundReason.RequestedByCustomer,
  ): Promise<Result<Refund, PaymentError>> {
    const payment = await this.repo.payments.getById(paymentId);
    if (payment.status !== PaymentStatus.Succeeded && payment.status !== PaymentStatus.PartiallyRefunded) {
      return err(new PaymentError("provider_error", `Payment ${payment.id} is ${payment.status}`));
    }
    if (!withinRefundWindow(payment, new Date())) {
      return err(new PaymentError("provider_error", "Payment is outside the refund window"));
    }
    const remaining = refundableAmount(payment);
    const requested = amount ?? remaining.amount;
    if (requested <= 0 || requested > remaining.amount) {
      return err(
        new PaymentError("refund_exceeds_payment", "Refund amount exceeds the refundable amount", {
          requested,
          remaining: remaining.amount,
        }),
      );
    }

    const stripeRefund = await this.stripe.createRefund(payment.stripePaymentIntentId!, requested, reason);
    const refund: Refund = {
      id: randomUUID(),
      paymentId: payment.id,
      amount: money(requested, payment.amount.currency),
      reason,
      stripeRefundId: stripeRefund.id,
      createdAt: new Date(),
    };
    await this.repo.refunds.save(refund);

    const refundedAmount = payment.refundedAmount + requested;
    await this.repo.payments.update(payment.id, {
      refundedAmount,
      status: refundedAmount === payment.amount.amount ? PaymentStatus.Refunded : PaymentStatus.PartiallyRefunded,
      updatedAt: new Date(),
    });
    return ok(refund);
  }

  async history(paymentId: string): Promise<{ refunds: Refund[]; remaining: Money }> {
    const payment = await this.repo.payments.getById(paymentId);
    return { refunds: await this.repo.refundsForPayment(paymentId), remaining: refundableAmount(payment) };
  }
}
