import { Money } from "../utils/money";

export enum InvoiceStatus {
  Draft = "draft",
  Open = "open",
  Paid = "paid",
  Void = "void",
  Uncollectible = "uncollectible",
}

export interface InvoiceLine {
  description: string;
  quantity: number;
  unitAmount: Money;
  taxRate?: number; // percent, e.g. 19 for 19 %
}

export interface Invoice {
  id: string;
  number: string;
  customerId: string;
  subscriptionId?: string;
  status: InvoiceStatus;
  lines: InvoiceLine[];
  subtotal: Money;
  tax: Money;
  total: Money;
  dueDate: Date;
  paidAt?: Date;
  stripeInvoiceId?: string;
}
