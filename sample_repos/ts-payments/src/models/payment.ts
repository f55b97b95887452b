import { Currency, Money } from "../utils/money";

export enum PaymentStatus {
  Pending = "pending",
  RequiresAction = "requires_action",
  Succeeded = "succeeded",
  Failed = "failed",
  Refunded = "refunded",
  PartiallyRefunded = "partially_refunded",
}

export enum PaymentMethodType {
  Card = "card",
  SepaDebit = "sepa_debit",
  BankTransfer = "bank_transfer",
}

export interface Payment {
  id: string;
  customerId: string;
  amount: Money;
  status: PaymentStatus;
  method: PaymentMethodType;
  stripePaymentIntentId?: string;
  invoiceId?: string;
  failureReason?: string;
  refundedAmount: number; // minor units
  createdAt: Date;
  updatedAt: Date;
}

export interface ChargeRequest {
  customerId: string;
  amount: number; // minor units
  currency: Currency;
  description?: string;
  idempotencyKey: string;
}

export interface Refund {
  id: string;
  paymentId: string;
  amount: Money;
  reason: RefundReason;
  stripeRefundId?: string;
  createdAt: Date;
}

export enum RefundReason {
  Duplicate = "duplicate",
  Fraudulent = "fraudulent",
  RequestedByCustomer = "requested_by_customer",
}
